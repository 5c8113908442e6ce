/**
 * The checks that open a config's local datasets (TRN305, TRN306, TRN317, and TRN321, which counts the first prompt
 * with the model's own tokenizer), run off the keystroke path: after a document's diagnostics are out, one pass per
 * analysis (a new version, new settings, files that came or went, a Run's plan). Peeks are cached per file,
 * modification time and size, and prompt counts with their tokenizer (prompt-tokens.ts, run in a worker thread
 * by prompt-tokens-thread.ts), so a pass after an edit of some other key reads and tokenizes nothing. A pass that a newer one or an edit made stale does no more I/O
 * and its findings are dropped. The files a document's last pass peeked at are looked at every 2 s, and a change
 * (content too, which the editor does not report) makes the pass again.
 */
import { statSync } from 'node:fs';
import { checkDatasetsOf, type DatasetFinding } from '../../runtime/config/check-config';
import type { CheckHost } from '../../runtime/config/check/check-context';
import { peekDataset } from '../../runtime/config/datasets/peek-dataset';
import type { PeekOptions, PeekResult } from '../../runtime/config/datasets/peek-result';
import type { Analysis } from '../service/analyze';
import { PromptTokensThread } from './prompt-tokens-thread';

/** Peeks kept (each holds at most a few rows). */
const MAX_PEEKS = 64;
/**
 * How often the files a document's last pass read are looked at: the editor reports files that come or go, not
 * changes of content (a run writes its files every step), and a dataset rewritten in place must still be seen.
 */
const POLL_MS = 2000;

/** One pass over one analysis of a document, and the files it peeked at (path -> modification time and size). */
interface Pass {
  analysis: Analysis;
  current: () => boolean;
  read: Map<string, string>;
  done: boolean;
}

export class DatasetChecks {
  /** Each document's latest pass: any other is stale. */
  private readonly latest = new Map<string, Pass>();
  private readonly peeks = new Map<string, { stamp: string; result: Promise<PeekResult> }>();
  /** TRN321's counts, off this thread: a tokenizer's load would hold up completion and hover. */
  private readonly prompts = new PromptTokensThread();
  private disposed = false;
  private readonly poll: NodeJS.Timeout;

  constructor(
    /** A pass's findings for the analysis it read, while that is still the document's version. */
    private readonly found: (analysis: Analysis, findings: DatasetFinding[]) => void,
    private readonly failed: (e: unknown) => void,
    pollMs = POLL_MS,
  ) {
    this.poll = setInterval(() => this.rereadChanged(), pollMs);
    this.poll.unref();
  }

  /**
   * Starts a pass over this analysis unless one was already started for it; `current` says whether the document is
   * still at the analysed version.
   */
  request(analysis: Analysis, current: () => boolean): void {
    if (this.latest.get(analysis.uri)?.analysis !== analysis) this.start(analysis, current);
  }

  /** The client shut the server down: no pass publishes any more. */
  dispose(): void {
    this.disposed = true;
    clearInterval(this.poll);
    this.prompts.dispose();
  }

  /** Files came or went: peeks are taken again (a directory's listing, a file replaced within its mtime tick). */
  filesChanged(): void {
    this.peeks.clear();
  }

  forget(uri: string): void {
    this.latest.delete(uri);
  }

  private start(analysis: Analysis, current: () => boolean): void {
    const pass: Pass = { analysis, current, read: new Map(), done: false };
    this.latest.set(analysis.uri, pass);
    const live = () => !this.disposed && this.latest.get(analysis.uri) === pass && current();
    // After this turn of the event loop: the diagnostics being published go out first.
    setImmediate(() => {
      if (!live()) return;
      checkDatasetsOf(analysis.result, this.host(analysis.host, pass, live))
        .then((findings) => {
          pass.done = true;
          if (live()) this.found(analysis, findings);
        })
        .catch((e: unknown) => {
          try {
            this.failed(e);
          } catch {
            // Nowhere to say it: the connection is gone.
          }
        });
    });
  }

  /** A file that a document's last pass peeked at changed on disk: the pass is made again. */
  private rereadChanged(): void {
    for (const pass of [...this.latest.values()]) {
      if (!pass.done || !pass.current()) continue;
      for (const [path, stamp] of pass.read)
        if (stampOf(path) !== stamp) {
          this.start(pass.analysis, pass.current);
          break;
        }
    }
  }

  /** The document's check host, with cached peeks and prompt counts that stop once the pass is stale. */
  private host(base: CheckHost, pass: Pass, live: () => boolean): CheckHost {
    return {
      ...base,
      peekDataset: (path, opts) => (live() ? this.peek(path, opts, pass.read) : Promise.resolve(undefined)),
      promptTokens: (req) => (live() ? this.prompts.count(req, base.env) : undefined),
    };
  }

  private peek(path: string, opts: PeekOptions, read: Map<string, string>): Promise<PeekResult> {
    const key = JSON.stringify([path, opts.split, opts.subsetName, opts.baseDir, opts.maxRows, opts.maxBytes]);
    const stamp = stampOf(path);
    // A pass may peek a file twice (its first rows, then more for the prompt count): the first stamp is the one kept,
    // so a file that changes between the two still differs from it at the next poll and the pass is made again.
    if (!read.has(path)) read.set(path, stamp);
    const hit = this.peeks.get(key);
    if (hit && hit.stamp === stamp) return hit.result;
    const result = peekDataset(path, opts);
    this.peeks.delete(key);
    this.peeks.set(key, { stamp, result });
    if (this.peeks.size > MAX_PEEKS) this.peeks.delete(this.peeks.keys().next().value as string);
    return result;
  }
}

/** A path's modification time and size ('' when it cannot be read: the peek says why). */
function stampOf(path: string): string {
  try {
    const s = statSync(path);
    return `${s.mtimeMs}:${s.size}`;
  } catch {
    return '';
  }
}
