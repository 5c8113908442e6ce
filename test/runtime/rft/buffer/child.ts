/**
 * A second process for the buffer tests (run with `node --import tsx`):
 *   sql-write {path, table, batches, batchSize, tokens, delayMs, finish}  writes batches, printing `begin k` / `committed k`
 *                                                                        (batches < 0: forever, until killed)
 *   file-write {path, batches, batchSize, finish}                       the same for a JSON-lines file buffer
 *   sql-read  {path, table, policy, batchSize, statePath, persistBatches} reads batches; after each it persists
 *                                                                        {position, uids} (write + rename) and prints
 *                                                                        `persisted k`; after persistBatches it reads
 *                                                                        one more batch, prints `read-unpersisted`, and
 *                                                                        waits to be killed
 */
import { renameSync, writeFileSync } from 'node:fs';
import {
  JsonlExperienceWriter,
  SqlExperienceReader,
  SqlExperienceWriter,
  type SqlReadPolicy,
} from '../../../../runtime/rft/buffer';
import { exp, uid } from './helpers';

async function main(): Promise<void> {
  const [mode, raw] = process.argv.slice(2);
  const a = JSON.parse(raw);
  if (mode === 'sql-write' || mode === 'file-write') {
    const w = mode === 'sql-write' ? new SqlExperienceWriter(a.path, a.table) : new JsonlExperienceWriter(a.path);
    for (let k = 0; a.batches < 0 || k < a.batches; k++) {
      const batch = Array.from({ length: a.batchSize }, (_, i) => exp(k, i, 0, { tokens: a.tokens, modelVersion: k }));
      process.stdout.write(`begin ${k}\n`);
      await w.write(batch);
      process.stdout.write(`committed ${k}\n`);
      if (a.delayMs) await new Promise((r) => setTimeout(r, a.delayMs));
    }
    if (a.finish) await w.finish();
    process.stdout.write('done\n');
    return;
  }
  if (mode === 'sql-read') {
    const r = new SqlExperienceReader(a.path, a.table, {
      policy: a.policy as SqlReadPolicy,
      maxReadTimeoutS: 10,
      pollIntervalMs: 10,
    });
    const uids: string[] = [];
    for (let k = 0; k < a.persistBatches; k++) {
      const batch = await r.read(a.batchSize);
      uids.push(...batch.map(uid));
      writeFileSync(`${a.statePath}.tmp`, JSON.stringify({ position: r.state(), uids }));
      renameSync(`${a.statePath}.tmp`, a.statePath);
      process.stdout.write(`persisted ${k}\n`);
    }
    await r.read(a.batchSize); // taken from the table, never recorded as done
    process.stdout.write('read-unpersisted\n');
    setInterval(() => {}, 1000);
    return;
  }
  throw new Error(`unknown mode ${mode}`);
}

main().catch((e) => {
  process.stderr.write(String(e?.stack ?? e) + '\n');
  process.exit(1);
});
