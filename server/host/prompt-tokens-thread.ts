/**
 * TRN321's prompt counts for the language server, in a worker thread (prompt-tokens-worker.ts). Loading a model's
 * tokenizer.json takes seconds for a real one (Qwen3's 11 MB: 1.5 to 4 s here), and on the server's thread that
 * would hold up every completion and hover meanwhile; the worker keeps the tokenizers and the counts cached per
 * folder and modification time, as prompt-tokens.ts does. The worker starts at the first count, does not keep
 * the process alive, and one that died is started again at the next.
 */
import { Worker } from 'node:worker_threads';
import type { PromptTokensRequest } from '../../runtime/config/check/check-context';
import { workerEntry } from '../../runtime/worker-entry';

export interface PromptTokensAsk {
  id: number;
  req: PromptTokensRequest;
  env: NodeJS.ProcessEnv | undefined;
}

export type PromptTokensAnswer = { id: number; tokens: number[] | undefined } | { id: number; error: string };

interface Pending {
  resolve: (tokens: number[] | undefined) => void;
  reject: (e: Error) => void;
}

export class PromptTokensThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private disposed = false;

  /** The turns' prompt tokens (undefined where promptTokens gives none); rejects if the worker fails. */
  count(req: PromptTokensRequest, env: NodeJS.ProcessEnv | undefined): Promise<number[] | undefined> {
    if (this.disposed) return Promise.resolve(undefined);
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, req, env } satisfies PromptTokensAsk);
    });
  }

  dispose(): void {
    this.disposed = true;
    this.fail(new Error('the language server is shutting down'));
    void this.worker?.terminate();
    this.worker = undefined;
  }

  private start(): Worker {
    const entry = workerEntry(__dirname, 'prompt-tokens-worker');
    const worker = new Worker(entry.file, { execArgv: entry.execArgv });
    worker.unref();
    worker.on('message', (m: PromptTokensAnswer) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if ('error' in m) p?.reject(new Error(`counting the prompts' tokens failed: ${m.error}`));
      else p?.resolve(m.tokens);
    });
    const died = (e: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.fail(e);
    };
    worker.on('error', (e) => died(new Error(`the prompt-count worker failed: ${e.message}`)));
    worker.on('exit', (code) => died(new Error(`the prompt-count worker exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }

  private fail(e: Error): void {
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }
}
