/**
 * Commands that work on configs rather than runs: Check All Configs in Workspace, New Config from Example, Create
 * Small Model (and its quick fix on `model.model_path`), Select Trinity Release.
 */
import { cpSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import * as vscode from 'vscode';
import { parseDocument, isScalar } from 'yaml';
import { looksLikeTrinityConfig } from '../runtime/config/detect';
import { LANGUAGE_ID } from './language-client';
import { findNode } from './runs/node-path';
import { runSettings } from './runs/run-settings';

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

interface Example {
  label: string;
  description: string;
  /** The config, and the folder copied with it. */
  config: string;
  folder: string;
}

/** Our examples: each config's first comment lines are its description. */
export function listExamples(examplesDir: string): Example[] {
  const out: Example[] = [];
  const visit = (dir: string, depth: number): void => {
    for (const name of readdirSync(dir).sort()) {
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) {
        if (depth === 0 && name !== 'data') visit(p, 1);
        continue;
      }
      if (!/\.trinity\.ya?ml$/.test(name)) continue;
      const lines = readFileSync(p, 'utf8').split('\n');
      const description = lines
        .filter((l) => l.startsWith('#') && !/trinity-version/.test(l))
        .slice(0, 3)
        .map((l) => l.replace(/^#\s?/, ''))
        .join(' ');
      out.push({
        label: path.relative(examplesDir, p),
        description,
        config: p,
        folder: depth === 0 ? examplesDir : dir,
      });
    }
  };
  if (existsSync(examplesDir)) visit(examplesDir, 0);
  return out;
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
  const e = pick.example;
  const name =
    e.folder === examplesDir ? path.basename(e.config).replace(/\.trinity\.ya?ml$/, '') : path.basename(e.folder);
  let target = path.join(folder.uri.fsPath, name);
  for (let i = 2; existsSync(target); i++) target = path.join(folder.uri.fsPath, `${name}-${i}`);
  if (e.folder === examplesDir) {
    cpSync(e.config, path.join(target, path.basename(e.config)));
    if (existsSync(path.join(examplesDir, 'data')))
      cpSync(path.join(examplesDir, 'data'), path.join(target, 'data'), { recursive: true });
  } else {
    // A model or runs made inside the extension's copy are not part of the example.
    cpSync(e.folder, target, {
      recursive: true,
      filter: (src) => !/^(model|checkpoints)([/\\]|$)/.test(path.relative(e.folder, src)),
    });
  }
  const doc = await vscode.workspace.openTextDocument(path.join(target, path.relative(e.folder, e.config)));
  await vscode.window.showTextDocument(doc);
}

const SIZES = [
  {
    label: 'tiny',
    detail: '2 layers, hidden 64 (about 0.1M parameters): seconds per step on a laptop',
    layers: 2,
    hidden: 64,
    heads: 4,
  },
  { label: 'small', detail: '4 layers, hidden 128 (about 1M parameters)', layers: 4, hidden: 128, heads: 4 },
  { label: 'medium', detail: '6 layers, hidden 256 (about 5M parameters)', layers: 6, hidden: 256, heads: 8 },
];
const VOCABS = [
  { label: 'byte', detail: 'byte-level (259 tokens): any text', vocab: 'byte' },
  {
    label: 'arithmetic characters',
    detail: "one token per character of digits, + { } \\ space, newline and a–z (the demo's)",
    vocab: 'char:0123456789+{}\\ \nabcdefghijklmnopqrstuvwxyz',
  },
];

export interface CreateModelArgs {
  config?: vscode.Uri;
  outDir?: string;
}

/** `model create` with quick picks; writes the new directory into the config's `model.model_path`. */
export async function createSmallModel(cliPath: string, args: CreateModelArgs = {}): Promise<string | undefined> {
  const configUri =
    args.config ??
    (vscode.window.activeTextEditor?.document.languageId === LANGUAGE_ID
      ? vscode.window.activeTextEditor.document.uri
      : undefined);
  const arch = await vscode.window.showQuickPick(['qwen2', 'llama', 'qwen3', 'gpt2'], {
    title: 'Create Small Model (1/3): architecture',
  });
  if (!arch) return undefined;
  const size = await vscode.window.showQuickPick(SIZES, { title: 'Create Small Model (2/3): size' });
  if (!size) return undefined;
  const vocab = await vscode.window.showQuickPick(VOCABS, { title: 'Create Small Model (3/3): tokenizer' });
  if (!vocab) return undefined;
  const base = configUri ? path.dirname(configUri.fsPath) : vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const outDir =
    args.outDir ??
    (await vscode.window.showInputBox({
      title: 'Model folder',
      value: base ? path.join(base, 'model') : '',
      validateInput: (v) => (v.trim() ? undefined : 'A folder is needed'),
    }));
  if (!outDir) return undefined;
  const node = findNode(runSettings(configUri).nodePath, process.env);
  if ('error' in node) {
    void vscode.window.showErrorMessage(node.error);
    return undefined;
  }
  const argv = [
    cliPath,
    'model',
    'create',
    '--arch',
    arch,
    '--layers',
    String(size.layers),
    '--hidden',
    String(size.hidden),
    '--heads',
    String(size.heads),
    '--max-positions',
    '512',
    '--vocab',
    vocab.vocab,
    '--out',
    outDir,
    '--force',
  ];
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Creating a ${size.label} ${arch} model in ${outDir}` },
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
  if (configUri) await writeModelPath(configUri, outDir);
  void vscode.window.showInformationMessage(result.text.split('\n')[0]);
  return outDir;
}

/** Sets `model.model_path` of the config to `modelDir` (relative to the config), unless it already resolves there. */
export async function writeModelPath(configUri: vscode.Uri, modelDir: string): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(configUri);
  const text = doc.getText();
  const yaml = parseDocument(text, { keepSourceTokens: true });
  const rel = path.relative(path.dirname(configUri.fsPath), modelDir) || '.';
  const node = yaml.getIn(['model', 'model_path'], true);
  const edit = new vscode.WorkspaceEdit();
  if (isScalar(node) && node.range) {
    const written = String(node.value);
    // `${oc.env:VAR,model}` whose default already names the folder: leave it.
    const dflt = /^\$\{oc\.env:[^,}]+,([^}]*)\}$/.exec(written)?.[1]?.trim();
    if (written === rel || dflt === rel || path.resolve(path.dirname(configUri.fsPath), written) === modelDir) return;
    edit.replace(configUri, new vscode.Range(doc.positionAt(node.range[0]), doc.positionAt(node.range[1])), rel);
  } else {
    yaml.setIn(['model', 'model_path'], rel);
    edit.replace(configUri, new vscode.Range(doc.positionAt(0), doc.positionAt(text.length)), yaml.toString());
  }
  await vscode.workspace.applyEdit(edit);
  await doc.save();
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
