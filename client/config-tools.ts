/**
 * Commands that work on configs rather than runs: Check All Configs in Workspace, New Config from Example, Create
 * Small Model (and its quick fix on `model.model_path`), Select Trinity Release, and adding a plugin folder to the
 * settings (the server's quick fix on TRN307).
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import * as vscode from 'vscode';
import { isScalar } from 'yaml';
import { looksLikeTrinityConfig } from '../runtime/config/detect';
import { parseYamlDocument } from '../runtime/config/load/yaml-document';
import { copyExample, listExamples } from './example-copies';
import { LANGUAGE_ID } from './language-client';
import { findNode } from './runs/node-path';
import { runSettings } from './runs/run-settings';
import type { RunPlanResponse } from '../server/lsp-messages';
import {
  missingModelTargets,
  MODEL_SIZES,
  MODEL_VOCABS,
  modelCreateArgs,
  positionsFor,
  yamlPathOf,
  type ModelTarget,
} from './small-model';

/** Opens every Trinity config of the workspace so the server checks it, then shows the Problems panel. */
export async function checkAllConfigs(): Promise<void> {
  const found = await vscode.workspace.findFiles(
    '**/*.{yaml,yml}',
    '{**/node_modules/**,**/.git/**,**/checkpoints/**}',
    5000,
  );
  let configs = 0;
  let errors = 0;
  const checked: vscode.Uri[] = [];
  await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Checking Trinity configs', cancellable: true },
    async (progress, token) => {
      for (const [i, uri] of found.entries()) {
        if (token.isCancellationRequested) break;
        progress.report({
          message: `${i + 1}/${found.length} ${vscode.workspace.asRelativePath(uri)}`,
          increment: 100 / found.length,
        });
        let text: string;
        try {
          text = readFileSync(uri.fsPath, 'utf8');
        } catch {
          continue;
        }
        if (!/\.trinity\.ya?ml$/.test(uri.fsPath) && !looksLikeTrinityConfig(text)) continue;
        configs++;
        checked.push(uri);
        const doc = await vscode.workspace.openTextDocument(uri);
        if (doc.languageId !== LANGUAGE_ID) await vscode.languages.setTextDocumentLanguage(doc, LANGUAGE_ID);
      }
      // Diagnostics arrive after the server's debounce.
      await new Promise((r) => setTimeout(r, 1500));
      // Only the checked files, and each problem once (a `check` task's problem matcher may report the same ones).
      for (const uri of checked) {
        const seen = new Set(
          vscode.languages
            .getDiagnostics(uri)
            .filter(
              (d) =>
                d.severity === vscode.DiagnosticSeverity.Error &&
                String(typeof d.code === 'object' ? d.code.value : d.code).startsWith('TRN'),
            )
            .map((d) => `${d.range.start.line}:${d.range.start.character}:${d.message}`),
        );
        errors += seen.size;
      }
    },
  );
  await vscode.commands.executeCommand('workbench.panel.markers.view.focus');
  void vscode.window.showInformationMessage(
    `${configs} Trinity config${configs === 1 ? '' : 's'} checked: ${errors} error${errors === 1 ? '' : 's'}.`,
  );
}

/** Copies an example (its config and the data next to it) into a workspace folder and opens it. */
export async function newConfigFromExample(examplesDir: string): Promise<void> {
  const examples = listExamples(examplesDir);
  const pick = await vscode.window.showQuickPick(
    examples.map((e) => ({ label: e.label, detail: e.description, example: e })),
    {
      title: 'New Trinity config from an example',
      matchOnDetail: true,
      placeHolder: 'Pick an example to copy into the workspace',
    },
  );
  if (!pick) return;
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) {
    void vscode.window.showErrorMessage('Open a folder first: the example is copied into it.');
    return;
  }
  const doc = await vscode.workspace.openTextDocument(copyExample(pick.example, examplesDir, folder.uri.fsPath));
  await vscode.window.showTextDocument(doc);
}

export interface CreateModelArgs {
  config?: vscode.Uri;
  outDir?: string;
  /** Every model of the config that is missing here (Run's offer), each in its own folder. */
  allMissing?: boolean;
}

/** The run plan of a config (its models and longest context), from the language server. */
export type PlanSource = (config: vscode.Uri) => Promise<RunPlanResponse | null>;

/**
 * `model create` with quick picks, sized to the config (its longest `max_model_len`); writes each new folder into the
 * config key that names it. Returns the folders made.
 */
export async function createSmallModel(
  cliPath: string,
  planOf: PlanSource,
  args: CreateModelArgs = {},
): Promise<string[] | undefined> {
  const configUri =
    args.config ??
    (vscode.window.activeTextEditor?.document.languageId === LANGUAGE_ID
      ? vscode.window.activeTextEditor.document.uri
      : undefined);
  const plan = configUri ? await planOf(configUri).catch(() => null) : null;
  const arch = await vscode.window.showQuickPick(['qwen2', 'llama', 'qwen3', 'gpt2'], {
    title: 'Create Small Model (1/3): architecture',
  });
  if (!arch) return undefined;
  const size = await vscode.window.showQuickPick(MODEL_SIZES, { title: 'Create Small Model (2/3): size' });
  if (!size) return undefined;
  const vocab = await vscode.window.showQuickPick(MODEL_VOCABS, { title: 'Create Small Model (3/3): tokenizer' });
  if (!vocab) return undefined;
  const base = configUri ? path.dirname(configUri.fsPath) : vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  let targets: ModelTarget[];
  if (args.allMissing && plan && base) targets = missingModelTargets(plan.models, base);
  else {
    const outDir =
      args.outDir ??
      (await vscode.window.showInputBox({
        title: 'Model folder',
        value: base ? path.join(base, 'model') : '',
        validateInput: (v) => (v.trim() ? undefined : 'A folder is needed'),
      }));
    if (!outDir) return undefined;
    const named = plan?.models.find((m) => base && path.resolve(base, m.path) === path.resolve(outDir));
    targets = [{ key: named?.key ?? 'model.model_path', outDir }];
  }
  const node = findNode(runSettings(configUri).nodePath, process.env);
  if ('error' in node) {
    void vscode.window.showErrorMessage(node.error);
    return undefined;
  }
  const maxPositions = positionsFor(plan);
  let created = '';
  for (const [i, t] of targets.entries()) {
    const argv = modelCreateArgs({ cliPath, arch, size, vocab: vocab.vocab, maxPositions, outDir: t.outDir, seed: i });
    const result = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Creating a ${size.label} ${arch} model (${maxPositions} positions) in ${t.outDir}`,
      },
      () =>
        new Promise<{ ok: boolean; text: string }>((res) =>
          execFile(node.path, argv, { encoding: 'utf8' }, (err, stdout, stderr) =>
            res({ ok: !err, text: (err ? stderr || err.message : stdout).trim() }),
          ),
        ),
    );
    if (!result.ok) {
      void vscode.window.showErrorMessage(`Could not create the model: ${result.text}`);
      return undefined;
    }
    if (configUri) await writeModelPath(configUri, t.key, t.outDir);
    created ||= result.text.split('\n')[0];
  }
  void vscode.window.showInformationMessage(
    targets.length > 1 ? `${created} (and ${targets.length - 1} more)` : created,
  );
  return targets.map((t) => t.outDir);
}

/** Sets the config's `key` (a model path) to `modelDir` (relative to the config), unless it already resolves there. */
export async function writeModelPath(configUri: vscode.Uri, key: string, modelDir: string): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(configUri);
  const text = doc.getText();
  const yaml = parseYamlDocument(text, { keepSourceTokens: true });
  const rel = path.relative(path.dirname(configUri.fsPath), modelDir) || '.';
  const node = yaml.getIn(yamlPathOf(key), true);
  const edit = new vscode.WorkspaceEdit();
  if (isScalar(node) && node.range) {
    const written = String(node.value);
    // `${oc.env:VAR,model}` whose default already names the folder: leave it.
    const dflt = /^\$\{oc\.env:[^,}]+,([^}]*)\}$/.exec(written)?.[1]?.trim();
    if (written === rel || dflt === rel || path.resolve(path.dirname(configUri.fsPath), written) === modelDir) return;
    edit.replace(configUri, new vscode.Range(doc.positionAt(node.range[0]), doc.positionAt(node.range[1])), rel);
  } else {
    yaml.setIn(yamlPathOf(key), rel);
    edit.replace(configUri, new vscode.Range(doc.positionAt(0), doc.positionAt(text.length)), yaml.toString());
  }
  await vscode.workspace.applyEdit(edit);
  await doc.save();
}

/**
 * Adds a folder (absolute) to the workspace's `trinityWorkbench.pluginDirs`, relative to its workspace folder as a
 * Run resolves the entries; the language server rechecks with it when the setting changes.
 */
export async function addPluginDir(dir: unknown): Promise<void> {
  if (typeof dir !== 'string' || !path.isAbsolute(dir)) return;
  const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(dir))?.uri.fsPath;
  const config = vscode.workspace.getConfiguration('trinityWorkbench', folder ? vscode.Uri.file(folder) : undefined);
  // The workspace's own entries, not the merged value: a user-level entry is not copied into the workspace.
  const written = config.inspect<string[]>('pluginDirs')?.workspaceValue ?? [];
  if (config.get<string[]>('pluginDirs', []).some((d) => path.resolve(folder ?? '', d) === dir)) return;
  const entry = folder ? path.relative(folder, dir) || '.' : dir;
  await config.update('pluginDirs', [...written, entry], vscode.ConfigurationTarget.Workspace);
}

/** The lightbulb on `model_path` when the model is not there: "Create Small Model here". */
export class ModelPathActions implements vscode.CodeActionProvider {
  static readonly kinds = [vscode.CodeActionKind.QuickFix];

  provideCodeActions(doc: vscode.TextDocument, range: vscode.Range): vscode.CodeAction[] {
    const line = doc.lineAt(range.start.line).text;
    const m = /^(\s*)model_path:\s*(.+?)\s*$/.exec(line);
    if (!m) return [];
    const value = m[2].replace(/^['"]|['"]$/g, '');
    const dflt = /^\$\{oc\.env:[^,}]+,([^}]*)\}$/.exec(value)?.[1]?.trim();
    const local = dflt ?? value;
    const dir = path.dirname(doc.uri.fsPath);
    const target = path.resolve(
      dir,
      /^[\w.-]+\/[\w.-]+$/.test(local) && !existsSync(path.resolve(dir, local)) ? 'model' : local,
    );
    if (existsSync(path.join(target, 'config.json'))) return [];
    const action = new vscode.CodeAction(
      `Create Small Model here (${path.relative(dir, target) || '.'})`,
      vscode.CodeActionKind.QuickFix,
    );
    action.command = {
      command: 'trinityWorkbench.createSmallModel',
      title: 'Create Small Model',
      arguments: [{ config: doc.uri, outDir: target }],
    };
    action.isPreferred = true;
    return [action];
  }
}

/** Select Trinity Release: for this file (`# trinity-version:` comment) or as the workspace default. */
export async function selectRelease(releases: string[]): Promise<void> {
  const doc = vscode.window.activeTextEditor?.document;
  const pick = await vscode.window.showQuickPick(
    releases.map((r) => ({ label: r })),
    { title: 'Trinity-RFT release to check against' },
  );
  if (!pick) return;
  const scopes = [
    ...(doc?.languageId === LANGUAGE_ID
      ? [{ label: 'This file', detail: 'writes a `# trinity-version:` comment on its first line', file: true }]
      : []),
    {
      label: 'Workspace default',
      detail: 'sets trinityWorkbench.trinityVersion for configs without the comment',
      file: false,
    },
  ];
  const scope =
    scopes.length === 1 ? scopes[0] : await vscode.window.showQuickPick(scopes, { title: `Use ${pick.label} for` });
  if (!scope) return;
  if (!scope.file) {
    await vscode.workspace
      .getConfiguration('trinityWorkbench')
      .update('trinityVersion', pick.label, vscode.ConfigurationTarget.Workspace);
    return;
  }
  const release = pick.label === 'auto' ? undefined : pick.label.replace(/^v/, '');
  const edit = new vscode.WorkspaceEdit();
  const first = doc!.lineAt(0);
  const comment = release ? `# trinity-version: ${release}` : undefined;
  if (/^\s*#\s*trinity-version:/.test(first.text)) {
    if (comment) edit.replace(doc!.uri, first.range, comment);
    else edit.delete(doc!.uri, first.rangeIncludingLineBreak);
  } else if (comment) edit.insert(doc!.uri, new vscode.Position(0, 0), `${comment}\n`);
  await vscode.workspace.applyEdit(edit);
}
