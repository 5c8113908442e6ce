/**
 * When an open document is worked on after an edit: completion's YAML parse soon (the `prepare` timer), validation
 * once the user pauses, and no validation at all before the user's settings are in (they choose the release and the
 * disabled rules).
 *
 * How long a pause must be comes from what validating this document costs (the median of its last validations): twice
 * that, so that while the user keeps typing validation takes at most a third of the server's time and a keystroke
 * rarely waits for one, but never less than a few milliseconds (a burst of changes in one go is validated once) nor
 * more than a second and a half. A fast config (a few ms) shows its problems a few tens of ms after the last
 * keystroke; a slow one is not validated between keystrokes that come faster than it can keep up with. A client's
 * `debounceMs` replaces this with a fixed delay.
 */
import type { TextDocument } from 'vscode-languageserver-textdocument';

/** Completion's YAML parse is made after this much quiet, well before validation's debounce runs out... */
const PREPARE_AFTER_MS = 30;
/** ...unless the file is large enough (16 KiB: ~8 ms) that parsing it between keystrokes would slow typing. */
const PREPARE_EARLY_MAX_CHARS = 16 * 1024;

/** The pause before validating is this many times the document's validation cost... */
const WAIT_PER_COST = 2;
/** ...within these bounds (ms). */
const MIN_WAIT_MS = 8;
const MAX_WAIT_MS = 1500;
/** The cost is the median of this many last validations: one outlier (a GC, the first run's compilation) is ignored. */
const COST_SAMPLES = 5;

export class ValidationSchedule {
  /** A fixed delay between the last edit and validation (the client's `debounceMs`); unset: sized from the cost. */
  fixedDelayMs: number | undefined;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly prepareTimers = new Map<string, NodeJS.Timeout>();
  /** Each document's last validation times, in ms, oldest first. */
  private readonly costs = new Map<string, number[]>();
  private readonly settingsReady: Promise<void>;
  private settingsLoaded: () => void = () => undefined;

  constructor(
    /** The open document at `uri` now (a timer fires on the version current then). */
    private readonly current: (uri: string) => TextDocument | undefined,
    private readonly prepare: (doc: TextDocument) => void,
    /** Validates a document and sends its diagnostics (synchronously: its duration is the validation's cost). */
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

  /** How long after an edit of `uri` it is validated (a document never validated yet: at once, to learn its cost). */
  delayFor(uri: string): number {
    if (this.fixedDelayMs !== undefined) return this.fixedDelayMs;
    const samples = this.costs.get(uri);
    if (!samples) return 0;
    const cost = [...samples].sort((a, b) => a - b)[(samples.length - 1) >> 1];
    return Math.min(MAX_WAIT_MS, Math.max(MIN_WAIT_MS, Math.round(WAIT_PER_COST * cost)));
  }

  schedule(doc: TextDocument, delay = this.delayFor(doc.uri)): void {
    const { uri, version } = doc;
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
        void this.settingsReady.then(() => this.validateIfCurrent(uri, version));
      }, delay),
    );
  }

  cancel(uri: string): void {
    clearTimeout(this.timers.get(uri));
    this.timers.delete(uri);
    clearTimeout(this.prepareTimers.get(uri));
    this.prepareTimers.delete(uri);
    this.costs.delete(uri);
  }

  /**
   * Validates `version` of `uri` unless a newer edit came in meanwhile. The check runs after the messages already
   * received (setImmediate queues behind them), so changes that arrived together are validated once, at the last;
   * completion's parse is made after the diagnostics are sent, and only if no edit came in between.
   */
  private validateIfCurrent(uri: string, version: number): void {
    setImmediate(() => {
      const doc = this.current(uri);
      if (doc?.version !== version) return;
      const start = performance.now();
      this.publish(doc);
      this.recordCost(uri, performance.now() - start);
      setImmediate(() => {
        const now = this.current(uri);
        if (now?.version === version) this.prepare(now);
      });
    });
  }

  private recordCost(uri: string, ms: number): void {
    const samples = this.costs.get(uri) ?? [];
    samples.push(ms);
    if (samples.length > COST_SAMPLES) samples.shift();
    this.costs.set(uri, samples);
  }
}
