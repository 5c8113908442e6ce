/**
 * What an engine failure means when the wasm backend's memory ran out. WebAssembly gives tfjs-backend-wasm one heap
 * of at most 4 GiB (wasm32); when a run needs more, tfjs' allocation does not fail cleanly: the kernel writes through
 * the pointer it got and the run dies with WebAssembly's `RuntimeError: memory access out of bounds`, and a single
 * tensor above what a typed array may hold is a `RangeError` from the host. Neither names memory, so the run's error
 * says what happened and what to lower, keeping the original text.
 */

/** The run's error message for `e`, explained when it is the wasm backend running out of memory. */
export function explainOutOfMemory(e: unknown, backend: string): string {
  const message = e instanceof Error ? e.message : String(e);
  if (!backend.startsWith('wasm') || !isOutOfMemory(e)) return message;
  return (
    `the wasm backend most likely ran out of memory (${message}): WebAssembly gives it one heap of at most 4 GiB. ` +
    'Lower what a step holds at once (buffer.batch_size or buffer.train_batch_size, ' +
    'trainer.ppo_micro_batch_size_per_gpu, model.max_model_len / max_response_tokens) or use a smaller model; ' +
    'larger runs belong on a GPU (`--backend webgpu`) or on Trinity-RFT (trinityWorkbench.runWith: trinity).'
  );
}

function isOutOfMemory(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  if (e.name === 'RuntimeError' && /memory access out of bounds/.test(e.message)) return true;
  // From the explorer's worker thread the error arrives as text: its stack, which starts with the name.
  if (/\bRuntimeError: memory access out of bounds/.test(e.message)) return true;
  return (
    e instanceof RangeError &&
    /Invalid typed array length|Array buffer allocation failed|WebAssembly\.Memory/.test(e.message)
  );
}
