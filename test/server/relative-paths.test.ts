/**
 * One rule for relative paths, Trinity's: they are opened from the directory the run starts in. Run from the editor
 * starts the runtime in the config's folder, so the language server checks them there and its hover shows the
 * absolute path; a runtime started there refuses exactly what the editor flags. Data placed at the workspace root
 * (where the checker used to look too) satisfies neither.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import type { Hover } from 'vscode-languageserver-types';
import { loadRunnableConfig } from '../../runtime/rft/run/job/job-config';
import { startInProcess, withCursor, type TestClient } from '../helpers/lsp';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'twb-paths-')));
const folder = join(root, 'job');
const CONFIG = `# trinity-version: main
mode: train
checkpoint_root_dir: \${oc.env:TWB_UNSET_CHECKPOINTS_VAR,./check|points}
algorithm:
  algorithm_type: sft
model:
  model_path: model
  max_model_len: 64
buffer:
  total_epochs: 1
  train_batch_size: 2
  trainer_input:
    experience_buffer:
      name: sft
      storage_type: file
      path: data/sft.jsonl
      format:
        prompt_type: messages
        messages_key: messages
trainer:
  save_interval: 1
`;
const { text, position } = withCursor(CONFIG);
const configFile = join(folder, 'sft.trinity.yaml');
const uri = pathToFileURL(configFile).toString();
const ROW = '{"messages": [{"role": "user", "content": "1+1"}, {"role": "assistant", "content": "2"}]}\n';

let c: TestClient;
before(async () => {
  mkdirSync(folder, { recursive: true });
  writeFileSync(configFile, text);
  // The data where a user following the old rule put it: the workspace root, not the config's folder.
  mkdirSync(join(root, 'data'), { recursive: true });
  writeFileSync(join(root, 'data', 'sft.jsonl'), ROW);
  c = await startInProcess({ rootUri: pathToFileURL(root).toString() });
});
after(() => c.close());

const trn304 = (ds: { code?: unknown; message: string }[]) => ds.filter((d) => d.code === 'TRN304');

test("the editor and a runtime started in the config's folder agree: data at the workspace root is missing", async () => {
  const ds = trn304(await c.open(uri, text));
  assert.equal(ds.length, 1, JSON.stringify(ds));
  assert.match(ds[0].message, new RegExp(`looked relative to \`${folder}\``));
  assert.doesNotMatch(ds[0].message, new RegExp(`\`${root}\`(?!/)`));
  await assert.rejects(
    loadRunnableConfig(configFile, { workDir: folder }, () => {}),
    (e: Error) => /TRN304/.test(e.message) && e.message.includes(configFile),
  );

  // In the config's folder, where Run starts the runtime: both accept it.
  mkdirSync(join(folder, 'data'), { recursive: true });
  writeFileSync(join(folder, 'data', 'sft.jsonl'), ROW);
  assert.deepEqual(trn304(await c.change(uri, `${text}\n`)), []);
  await loadRunnableConfig(configFile, { workDir: folder }, () => {});
});

test('hover on a relative path shows where it is opened; on an unset ${oc.env:VAR,default}, that the default is used', async () => {
  await c.change(uri, text);
  const h = await c.request<Hover>('textDocument/hover', { textDocument: { uri }, position });
  const md = (h.contents as { value: string }).value;
  assert.match(md, new RegExp(`\\*\\*Opened at:\\*\\* \`${join(folder, 'checkpoints')}\``));
  assert.match(md, /the default: environment variable `TWB_UNSET_CHECKPOINTS_VAR` is not set/);
  assert.doesNotMatch(md, /from environment variable/);
});
