/** An error about the data; `file`/`line`/`key` say where when known. */
export class DataError extends Error {
  override name = 'DataError';
  constructor(
    message: string,
    readonly file?: string,
    readonly line?: number,
    readonly key?: string,
  ) {
    super(message);
  }
}
