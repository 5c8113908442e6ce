/**
 * When an open document is worked on after an edit: completion's YAML parse soon (the `prepare` timer), validation
 * after the debounce, and no validation at all before the user's settings are in (they choose the release and the
 * disabled rules).
 */
import type { TextDocument } from 'vscode-languageserver-textdocument';

/** Completion's YAML parse is made after this much quiet, well before validation's debounce runs out... */
const PREPARE_AFTER_MS = 30;
/** ...unless the file is large enough (16 KiB: ~8 ms) that parsing it between keystrokes would slow typing. */
const PREPARE_EARLY_MAX_CHARS = 16 * 1024;

export class ValidationSchedule {
  /** Delay between the last edit and validation, in ms (the client's `debounceMs`). */
  debounceMs = 200;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly prepareTimers = new Map<string, NodeJS.Timeout>();
  private readonly settingsReady: Promise<void>;
  private settingsLoaded: () => void = () => undefined;

  constructor(
    /** The open document at `uri` now (a timer fires on the version current then). */
    private readonly current: (uri: string) => TextDocument | undefined,
    private readonly prepare: (doc: TextDocument) => void,
    private readonly publish: (doc: TextDocument) => void,
  ) {
    this.settingsReady = new Promise<void>((res) => {
      this.settingsLoaded = res;
    });
  }

  /** Validation may run from now on (timers that fired earlier publish now). */
  settingsIn(): void {
    this.settingsLoaded();
  }

  schedule(doc: TextDocument, delay = this.debounceMs): void {
    const { uri } = doc;
    clearTimeout(this.prepareTimers.get(uri));
    if (delay > PREPARE_AFTER_MS && doc.getText().length <= PREPARE_EARLY_MAX_CHARS) {
      this.prepareTimers.set(
        uri,
        setTimeout(() => {
          this.prepareTimers.delete(uri);
          const current = this.current(uri);
          if (current) this.prepare(current);
        }, PREPARE_AFTER_MS),
      );
    }
    clearTimeout(this.timers.get(uri));
    this.timers.set(
      uri,
      setTimeout(() => {
        this.timers.delete(uri);
        void this.settingsReady.then(() => {
          const current = this.current(uri);
          if (current) this.publish(current);
        });
      }, delay),
    );
  }

  cancel(uri: string): void {
    clearTimeout(this.timers.get(uri));
    this.timers.delete(uri);
    clearTimeout(this.prepareTimers.get(uri));
    this.prepareTimers.delete(uri);
  }
}
