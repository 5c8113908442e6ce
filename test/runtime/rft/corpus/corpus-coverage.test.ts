/**
 * Trinity's own main-release examples, each shrunk the same way (shrink.ts: the tiniest model, one step of a small
 * batch, a few rows in the example's own data format), run in this process as `trinity-workbench run` runs them.
 * Each either finishes, having done the work its mode names, or is refused before any work with its reason. The
 * table goes to the console and to test-results/corpus-coverage.md, and the README's count is checked against it.
 * Fails when a config fails after its run started (a reason of ours), when a finished run skipped part of its work
 * (a role with no metrics, a task that failed, a LoRA config with no adapter saved), or when the README is stale.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { rolesOf } from '../../../../runtime/config/model/choices';
import { initBackend } from '../../../../runtime/engine/backend';
import { runJob } from '../../../../runtime/rft/run/job/job';
import { corpusConfigs, TRINITY_ENV } from '../../../helpers/corpus';
import { saveTiniestModel, shrinkConfig } from './shrink';

type Outcome = 'finishes' | 'refused' | 'fails';

interface Row {
  config: string;
  outcome: Outcome;
  seconds: number;
  why: string;
}

/** Explore then train: Trinity's explore/train pair shares the queue in its `sqlite:///` path (async_gsm8k). */
const ORDER = (rel: string): number => (/explorer\.yaml$/.test(rel) ? 0 : /trainer\.yaml$/.test(rel) ? 1 : 0);

const rows: Row[] = [];
const home = process.cwd();
const savedEnv = { ...process.env };
let root: string;

before(async () => {
  await initBackend({ prefer: 'wasm' });
  root = mkdtempSync(join(tmpdir(), 'twb-corpus-'));
  saveTiniestModel(join(root, 'model'));
  Object.assign(process.env, TRINITY_ENV);
  // One step leaves nothing for a worker thread to overlap, and starting one costs seconds per config.
  process.env.TRINITY_WORKBENCH_EXPLORER_THREAD = '0';
});

after(() => {
  process.chdir(home);
  rmSync(root, { recursive: true, force: true });
  for (const k of [...Object.keys(TRINITY_ENV), 'TRINITY_WORKBENCH_EXPLORER_THREAD'])
    if (!(k in savedEnv)) delete process.env[k];
});

/** The first line of a refusal or error that says why (the config's path and line are in the lines after it). */
function reason(error: string | undefined): string {
  const lines = (error ?? '').split('\n').map((l) => l.trim());
  const detail = lines.find((l) => /`[^`]+`|TRN\d+/.test(l)) ?? lines[0] ?? '';
  return detail.replace(/^\S+\.yaml:\d+:\d+\s*/, '').slice(0, 240);
}

async function runOne(rel: string, abs: string): Promise<Row> {
  // One working directory per example folder, as a user runs a pair from one place; data per config.
  const folder = join(root, dirname(rel));
  const dir = join(folder, basename(rel).replace(/\.ya?ml$/, ''));
  mkdirSync(dir, { recursive: true });
  const { yaml } = shrinkConfig(readFileSync(abs, 'utf8'), dir, join(root, 'model'));
  const path = join(dir, 'config.yaml');
  writeFileSync(path, yaml);
  let started = false;
  let mode = '';
  const roles = new Set<string>();
  const failedTasks: string[] = [];
  const began = Date.now();
  process.chdir(folder);
  const r = await runJob(path, {
    backend: 'wasm',
    workDir: folder,
    events: (e) => {
      if (e.type === 'run') started = true;
      if (e.type === 'stage') mode = e.mode;
      if (e.type === 'metrics') roles.add(e.role);
    },
    log: (_, m) => {
      if (/ failed after \d+ attempt/.test(m)) failedTasks.push(m);
    },
  }).finally(() => process.chdir(home));
  const seconds = (Date.now() - began) / 1000;
  const config = rel;
  if (r.status !== 'finished') return { config, outcome: started ? 'fails' : 'refused', seconds, why: reason(r.error) };
  const want = rolesOf(mode);
  const missing = (['explorer', 'trainer'] as const).filter((role) => want[role] && !roles.has(role));
  const lost: string[] = [];
  if (missing.length) lost.push(`no ${missing.join(' or ')} metrics`);
  if (failedTasks.length) lost.push(`${failedTasks.length} task(s) failed: ${failedTasks[0].slice(0, 160)}`);
  if (/^\s*lora_configs:/m.test(yaml) && !hasAdapter(join(root, dirname(rel))))
    lost.push('model.lora_configs set but no lora_adapter/ saved');
  return lost.length
    ? { config, outcome: 'fails', seconds, why: `finished but ${lost.join('; ')}` }
    : { config, outcome: 'finishes', seconds, why: '' };
}

function hasAdapter(dir: string): boolean {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    if (e.name === 'lora_adapter' || hasAdapter(join(dir, e.name))) return true;
  }
  return false;
}

function table(): string {
  const count = (o: Outcome) => rows.filter((r) => r.outcome === o).length;
  return [
    `${rows.length} main-release configs: ${count('finishes')} finish, ${count('refused')} refused before work, ${count('fails')} fail after starting`,
    '',
    '| config | outcome | s | why |',
    '| --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.config} | ${r.outcome} | ${r.seconds.toFixed(1)} | ${r.why.replace(/\|/g, '\\|')} |`),
    '',
  ].join('\n');
}

test("Trinity's main-release examples, shrunk, finish or are refused before work", async () => {
  const configs = corpusConfigs('main').sort((a, b) =>
    dirname(a.rel) === dirname(b.rel) ? ORDER(a.rel) - ORDER(b.rel) : a.rel < b.rel ? -1 : 1,
  );
  assert.ok(configs.length > 40, `main has ${configs.length} configs`);
  for (const c of configs) rows.push(await runOne(c.rel, c.abs));
  const text = table();
  console.log(text);
  mkdirSync('test-results', { recursive: true });
  writeFileSync(join('test-results', 'corpus-coverage.md'), text);
  const fails = rows.filter((r) => r.outcome === 'fails');
  assert.deepEqual(
    fails.map((r) => `${r.config}: ${r.why}`),
    [],
    'every config finishes, or is refused before any work',
  );
  const finish = rows.filter((r) => r.outcome === 'finishes').length;
  const refused = rows.filter((r) => r.outcome === 'refused').length;
  const readme = readFileSync('README.md', 'utf8');
  const stated = `Of Trinity's ${rows.length} main-release example configs, shrunk to a tiny model, ${finish} finish here and ${refused} are refused before any work`;
  assert.ok(readme.includes(stated), `README.md should say: "${stated}"`);
  assert.ok(existsSync(join('test-results', 'corpus-coverage.md')));
});
