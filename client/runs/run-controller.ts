/**
 * Run, Stop, Resume, Rerun and Delete as the user sees them: a config is saved and checked before it starts (its
 * errors stop it, shown in the Problems panel), a missing model gets "Create Small Model here", each run gets an
 * output channel and a cancellable progress notification, and a run that fails says why with "Show Output".
 * The VS Code side of the run manager; the manager and the launchers know nothing of VS Code.
 */
import { existsSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LANGUAGE_ID, type TrinityLanguageClient } from '../language-client';
import { runSettings, type RunSettings } from './run-settings';
import type { Launcher, LaunchSpec, RunEnd } from './launchers/launcher';
import { LocalLauncher } from './launchers/local';
import { RayJobLauncher } from './launchers/ray-job';
import { TrinityLauncher } from './launchers/trinity';
import { findNode } from './node-path';
import { RunManager, type LiveRun } from './run-manager';
import { describeProgress, stageFraction, type RunState } from './run-state';

export interface RunRequest {
  resume?: boolean;
  /** Start from scratch: the job directory is deleted first (after the user confirms). */
  fresh?: boolean;
}

export class RunController implements vscode.Disposable {
  readonly manager: RunManager;
  private readonly channels = new Map<string, vscode.OutputChannel>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly lsp: TrinityLanguageClient,
    private readonly launcherFor: (
      settings: RunSettings,
      spec: Omit<LaunchSpec, 'env'> & { extraArgs?: string[] },
    ) => Launcher = (s, spec) => this.launcher(s, spec),
  ) {
    this.manager = new RunManager({
      output: (run) => {
        const name = `Trinity Run: ${runLabel(run)}`;
        this.channels.get(run.key)?.dispose();
        const channel = vscode.window.createOutputChannel(name);
        this.channels.set(run.key, channel);
        return { line: (t) => channel.appendLine(t) };
      },
    });
  }

  /** Runs the config at `uri` (the active editor's when none is given). */
  async run(uri: vscode.Uri | undefined, req: RunRequest = {}): Promise<LiveRun | undefined> {
    if (!vscode.workspace.isTrusted) {
      const pick = await vscode.window.showWarningMessage(
        "Runs are off in Restricted Mode: a run executes the config's plugins and model code. Trust this workspace to run it.",
        'Manage Workspace Trust',
      );
      if (pick) await vscode.commands.executeCommand('workbench.trust.manage');
      return undefined;
    }
    const doc = await this.configDocument(uri);
    if (!doc) return undefined;
    if (doc.isDirty && !(await doc.save())) return undefined;
    const plan = await this.lsp.runPlan(doc.uri);
    if (!plan) {
      void vscode.window.showErrorMessage(
        `${path.basename(doc.uri.fsPath)} could not be checked: is the language server running? See the "Trinity RFT Workbench" output.`,
      );
      return undefined;
    }
    if (plan.errors.length) {
      const first = plan.errors[0];
      await vscode.commands.executeCommand('workbench.panel.markers.view.focus');
      void vscode.window.showErrorMessage(
        `${path.basename(doc.uri.fsPath)} has ${plan.errors.length} error${plan.errors.length > 1 ? 's' : ''}; fix ${plan.errors.length > 1 ? 'them' : 'it'} before running. Line ${first.range.start.line + 1}: ${first.message}`,
      );
      return undefined;
    }
    const configDir = path.dirname(doc.uri.fsPath);
    const cwd = vscode.workspace.getWorkspaceFolder(doc.uri)?.uri.fsPath ?? configDir;
    const settings = runSettings(doc.uri);
    let extraArgs: string[] = [];
    // Only the local runtime loads the model on this machine; Trinity-RFT and a Ray job find it themselves.
    if (settings.runWith === 'local' && plan.model && !plan.model.found) {
      const target = plan.model.hubId ? path.join(configDir, 'model') : path.resolve(configDir, plan.model.path);
      const actions = ['Create Small Model here', ...(plan.model.hubId ? ['Download and Run'] : [])];
      const pick = await vscode.window.showErrorMessage(
        `model.model_path: ${plan.model.problem ?? `${plan.model.path} was not found`}`,
        ...actions,
      );
      if (pick === 'Create Small Model here')
        await vscode.commands.executeCommand('trinityWorkbench.createSmallModel', { config: doc.uri, outDir: target });
      if (pick !== 'Download and Run') return undefined;
      extraArgs = ['--download'];
    }
    const jobDir = path.resolve(cwd, plan.jobDir);
    if (req.fresh && this.manager.liveRuns().some((r) => r.state.jobDir === jobDir)) {
      void vscode.window.showWarningMessage(
        `A run is still writing to ${jobDir}: stop it before rerunning from scratch.`,
      );
      return undefined;
    }
    if (req.fresh && existsSync(jobDir)) {
      const ok = await vscode.window.showWarningMessage(
        `Rerun from scratch deletes ${jobDir} (checkpoints, buffers, metrics).`,
        { modal: true },
        'Delete and Rerun',
      );
      if (ok !== 'Delete and Rerun') return undefined;
      rmSync(jobDir, { recursive: true, force: true });
    }
    const mode = plan.stages.length === 1 ? plan.stages[0].mode : undefined;
    const base = {
      configPath: doc.uri.fsPath,
      cwd,
      jobDir,
      mode,
      resume: req.resume === true,
      pluginDirs: settings.pluginDirs.map((d) => path.resolve(cwd, d)),
      extraArgs,
    };
    let run: LiveRun;
    try {
      run = await this.manager.start(this.launcherFor(settings, base), { ...base, env: { ...process.env } });
    } catch (e) {
      void vscode.window.showErrorMessage(`Could not start ${path.basename(doc.uri.fsPath)}: ${(e as Error).message}`);
      return undefined;
    }
    if (settings.showProgressNotification) this.showProgress(run, settings.stopGraceMs);
    void run.handle.ended.then((end) => this.reportEnd(run, end));
    return run;
  }

  /** Stops the run of `key` (RunState.key), else the active editor's or the latest live run. */
  async stop(key: string | undefined): Promise<void> {
    const dir = key ?? this.activeLiveRun()?.state.key;
    if (!dir) {
      void vscode.window.showInformationMessage('No run of this window is running.');
      return;
    }
    await this.manager.stop(dir, runSettings().stopGraceMs);
  }

  /** Continue a stopped, killed or failed run from its last checkpoint. */
  async resume(run: RunState): Promise<void> {
    if (!run.configPath || !existsSync(run.configPath)) {
      void vscode.window.showErrorMessage(
        `The config of ${run.jobDir} is not known${run.configPath ? ` (${run.configPath} is gone)` : ''}: open the config and press Run (continue_from_checkpoint resumes it).`,
      );
      return;
    }
    await this.run(vscode.Uri.file(run.configPath), { resume: true });
  }

  async rerun(run: RunState): Promise<void> {
    if (!run.configPath) return;
    await this.run(vscode.Uri.file(run.configPath), { fresh: true });
  }

  async deleteRun(run: RunState): Promise<boolean> {
    if (run.live) {
      void vscode.window.showWarningMessage('Stop the run before deleting it.');
      return false;
    }
    const ok = await vscode.window.showWarningMessage(
      `Delete ${run.jobDir}? Its checkpoints, buffers and metrics are removed from disk.`,
      { modal: true },
      'Delete',
    );
    if (ok !== 'Delete') return false;
    rmSync(run.jobDir, { recursive: true, force: true });
    return true;
  }

  showOutput(key: string): void {
    this.channels.get(key)?.show(true);
  }

  /** The live run of the active editor's config, else the most recent live run. */
  activeLiveRun(): LiveRun | undefined {
    const live = this.manager.liveRuns();
    const active = vscode.window.activeTextEditor?.document.uri.fsPath;
    return live.find((r) => r.state.configPath === active) ?? live.at(-1);
  }

  /** Stops every run this window started (the window is closing). */
  async dispose(): Promise<void> {
    await this.manager.stopAll(Math.min(runSettings().stopGraceMs, 4000));
    for (const c of this.channels.values()) c.dispose();
    for (const d of this.disposables) d.dispose();
  }

  private async configDocument(uri: vscode.Uri | undefined): Promise<vscode.TextDocument | undefined> {
    const doc = uri ? await vscode.workspace.openTextDocument(uri) : vscode.window.activeTextEditor?.document;
    if (!doc || doc.languageId !== LANGUAGE_ID || doc.uri.scheme !== 'file') {
      void vscode.window.showInformationMessage('Open a Trinity config (a trinity-yaml file) to run it.');
      return undefined;
    }
    return doc;
  }

  /** The launcher `trinityWorkbench.runWith` asks for. */
  private launcher(settings: RunSettings, spec: { extraArgs?: string[] }): Launcher {
    if (settings.runWith === 'trinity') return new TrinityLauncher({ pythonPath: settings.pythonPath });
    if (settings.runWith === 'ray-job') return new RayJobLauncher({ address: settings.rayAddress || undefined });
    const node = findNode(settings.nodePath, process.env);
    if ('error' in node) return { kind: 'local', launch: () => Promise.reject(new Error(node.error)) };
    return new LocalLauncher({
      nodePath: node.path,
      cliPath: this.context.asAbsolutePath(path.join('dist', 'cli.js')),
      extraArgs: [
        ...(settings.backend && settings.backend !== 'auto' ? ['--backend', settings.backend] : []),
        ...(spec.extraArgs ?? []),
      ],
    });
  }

  private showProgress(run: LiveRun, graceMs: number): void {
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Trinity: ${runLabel(run.state)}`, cancellable: true },
      (progress, token) => {
        let reported = 0;
        token.onCancellationRequested(() => void this.manager.stop(run.state.key, graceMs));
        const sub = this.manager.onDidChange((s) => {
          if (s !== run.state) return;
          const f = stageFraction(s);
          const increment = f !== undefined && f * 100 > reported ? f * 100 - reported : 0;
          reported += increment;
          progress.report({
            message: s.status === 'stopping' ? 'stopping after the current step…' : describeProgress(s),
            increment,
          });
        });
        return run.handle.ended.finally(() => sub.dispose());
      },
    );
  }

  private async reportEnd(run: LiveRun, end: RunEnd): Promise<void> {
    if (end.status !== 'failed') return;
    const first = (end.error ?? 'the run failed').split('\n')[0];
    const pick = await vscode.window.showErrorMessage(`Run ${runLabel(run.state)} failed: ${first}`, 'Show Output');
    if (pick) this.showOutput(run.state.key);
  }
}

export function runLabel(run: RunState): string {
  return run.configPath ? path.basename(run.configPath).replace(/(\.trinity)?\.ya?ml$/, '') : path.basename(run.jobDir);
}
