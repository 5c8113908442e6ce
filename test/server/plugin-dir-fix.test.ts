/**
 * TRN307's quick fix for a plugin's name: the agents-plugin example, copied as New Config from Example copies it,
 * names a workflow its own `plugins/` folder registers. Without that folder in `trinityWorkbench.pluginDirs` the name
 * is an error, whose code action (over a real LSP connection) is "Add agents-plugin/plugins to
 * trinityWorkbench.pluginDirs", running the extension's command with the folder. Once the setting holds it (as that
 * command writes it, relative to the workspace folder) and the client says the settings changed, the error clears,
 * with no reload and no edit. A name no folder registers gets no such fix.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import type { CodeAction, Diagnostic } from 'vscode-languageserver-types';
import { copyExample, listExamples } from '../../client/example-copies';
import { ADD_PLUGIN_DIR_COMMAND } from '../../server/lsp-messages';
import { startInProcess, type TestClient } from '../helpers/lsp';

const EXAMPLES = resolve(__dirname, '..', '..', 'examples');
const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'twb-plugin-dir-fix-')));
const example = listExamples(EXAMPLES).find((e) => e.label === join('agents-plugin', 'step-wise-lake.trinity.yaml'));
assert.ok(example, 'the agents-plugin example is shipped');
const config = copyExample(example, EXAMPLES, workspace);
const uri = pathToFileURL(config).toString();
const pluginsDir = join(dirname(config), 'plugins');

/** The settings the client answers `workspace/configuration` with (the test changes them as the command would). */
const settings: { pluginDirs: string[] } = { pluginDirs: [] };
const trn307 = (ds: Diagnostic[]) => ds.filter((d) => d.code === 'TRN307');

let c: TestClient;
before(async () => {
  c = await startInProcess({ rootUri: pathToFileURL(workspace).toString(), configuration: settings });
});
after(() => c.close());

async function actionsFor(d: Diagnostic): Promise<CodeAction[]> {
  return c.request<CodeAction[]>('textDocument/codeAction', {
    textDocument: { uri },
    range: d.range,
    context: { diagnostics: [d] },
  });
}

test('the unknown workflow offers to add the folder that registers it, and the setting clears the error', async () => {
  const text = readFileSync(config, 'utf8');
  const [d] = trn307(await c.open(uri, text));
  assert.ok(d, 'TRN307 on the plugin workflow without the setting');
  assert.equal(d.severity, 1);
  // The message names the real fixes (the setting its quick fix writes, the CLI's flag), not "disable TRN307".
  assert.match(d.message, /`trinityWorkbench\.pluginDirs`.*quick fix.*`--plugin-dir DIR`/);
  assert.doesNotMatch(d.message, /disable/);
  const lines = text.split('\n');
  assert.equal(
    lines[d.range.start.line].slice(d.range.start.character, d.range.end.character),
    'default_workflow_type',
  );

  const fixes = (await actionsFor(d)).filter((a) => a.command?.command === ADD_PLUGIN_DIR_COMMAND);
  assert.deepEqual(
    fixes.map((a) => ({ title: a.title, args: a.command?.arguments, preferred: a.isPreferred })),
    [{ title: 'Add agents-plugin/plugins to trinityWorkbench.pluginDirs', args: [pluginsDir], preferred: true }],
  );

  // What the command writes: the folder relative to the workspace folder, then VS Code's configuration change.
  const cleared = c.nextDiagnostics(uri, (ds) => trn307(ds).length === 0, 10_000);
  settings.pluginDirs = [relative(workspace, pluginsDir)];
  await c.conn.sendNotification('workspace/didChangeConfiguration', { settings: { trinityWorkbench: settings } });
  const after = await cleared;
  // A JavaScript plugin runs locally: no "Trinity-RFT only" information either.
  assert.deepEqual(
    after.filter((d) => d.code === 'TRN312' || d.severity === 1).map((d) => d.message),
    [],
  );
});

test('a name no folder registers gets no plugin folder fix', async () => {
  const text = readFileSync(config, 'utf8').replace(
    'default_workflow_type: step_wise_lake',
    'default_workflow_type: stepwise_lakes',
  );
  const [d] = trn307(await c.change(uri, text));
  assert.ok(d, 'TRN307 on an unknown name');
  const actions = await actionsFor(d);
  assert.ok(!actions.some((a) => a.command?.command === ADD_PLUGIN_DIR_COMMAND), JSON.stringify(actions));
});
