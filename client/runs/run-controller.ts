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
import type { RunPlanResponse } from '../../server/lsp-messages';
import { runSettings, type RunSettings } from './run-settings';
import type { Launcher, LaunchSpec } from './launchers/launcher';
import { LocalLauncher } from './launchers/local';
import { RayJobLauncher } from './launchers/ray-job';
import { TrinityLauncher } from './launchers/trinity';
import { findNode } from './node-path';
import { RunManager, type LiveRun } from './run-manager';
import { BatchedLines } from './batched-lines';
import {
  describeEnd,
  describeHolder,
  describeProgress,
  holderIsHere,
  runKey,
  stageFraction,
  type RunState,
} from './run-state';
import { RunBoard } from './run-board';
import { readJobRuns } from './job-dirs';
import type { JobRefusal } from '../../runtime/protocol';
import { stopElsewhere } from './stop-elsewhere';

export interface RunRequest {
  resume?: boolean;
  /** Start from scratch: the job directory is deleted first (after the user confirms). */
  fresh?: boolean;
}

export class RunController implements vscode.Disposable {
  readonly manager: RunManager;
  /** Every run's state, this window's and those on disk: what every view and button shows. */
  readonly board: RunBoard;
  /** Job directories this window ran, kept across windows so they are listed even outside the workspace. */
  private readonly known: Set<string>;
  /** Each run's output channel, fed in batches (a channel shown costs the window an update per append). */
  private readonly channels = new Map<string, { channel: vscode.OutputChannel; lines: BatchedLines }>();
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
        this.disposeChannel(run.key);
        const channel = vscode.window.createOutputChannel(name);
        const lines = new BatchedLines({ append: (text) => channel.append(text) });
        this.channels.set(run.key, { channel, lines });
        return { line: (t) => lines.line(t) };
      },
    });
    this.known = new Set(context.workspaceState.get<string[]>('trinityWorkbench.jobDirs', []));
    this.board = new RunBoard(this.manager, {
      roots: () => (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
      extraJobDirs: () => this.known,
    }).start();
    this.disposables.push(
      this.manager.onDidChange((s) => {
        if (this.known.has(s.jobDir)) return;
        this.known.add(s.jobDir);
        void context.workspaceState.update('trinityWorkbench.jobDirs', [...this.known].slice(-200));
      }),
      this.board.onDidEnd((run) => void this.reportEnd(run)),
      this.board,
    );
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
    // Trinity opens relative paths from the directory the run starts in: the config's folder (as a Ray job's
    // working_dir is), the folder the language server checks them against.
    const cwd = configDir;
    const folder = vscode.workspace.getWorkspaceFolder(doc.uri)?.uri.fsPath ?? configDir;
    const settings = runSettings(doc.uri);
    let extraArgs: string[] = [];
    // Only the local runtime loads the model on this machine; Trinity-RFT and a Ray job find it themselves.
    const missing = settings.runWith === 'local' ? plan.models.filter((m) => m.found === false) : [];
    if (missing.length) {
      const [first, ...others] = missing;
      const actions = ['Create Small Model here', ...(missing.some((m) => m.hubId) ? ['Download and Run'] : [])];
      const pick = await vscode.window.showErrorMessage(
        `${first.key}: ${first.problem || `${first.path} was not found`}${others.length ? ` (and ${others.map((m) => m.key).join(', ')})` : ''}`,
        ...actions,
      );
      if (pick === 'Create Small Model here')
        await vscode.commands.executeCommand('trinityWorkbench.createSmallModel', {
          config: doc.uri,
          allMissing: true,
        });
      if (pick !== 'Download and Run') return undefined;
      extraArgs = ['--download'];
    }
    const jobDir = path.resolve(cwd, plan.jobDir);
    const mode = plan.stages.length === 1 ? plan.stages[0].mode : undefined;
    // One writer per job folder: a live run there (this window's, a terminal's, another window's) is shown, not joined.
    const busy = this.board.list().find((r) => r.live && r.key === runKey(jobDir, mode));
    if (busy) {
      await this.alreadyRunning(busy);
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
    const base = {
      configPath: doc.uri.fsPath,
      cwd,
      jobDir,
      mode,
      resume: req.resume === true,
      pluginDirs: settings.pluginDirs.map((d) => path.resolve(folder, d)),
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
    void run.handle.ended.then((end) => end.refusal && this.refused(run.state, end.refusal));
    return run;
  }

  /** What a Run of `uri` would do (errors, job dir, models), from the language server. */
  plan(uri: vscode.Uri): Promise<RunPlanResponse | null> {
    return this.lsp.runPlan(uri);
  }

  /**
   * Stops the run of `key` (RunState.key), else the active editor's or the latest live run. A run of this window
   * stops through its process group; one started elsewhere gets SIGTERM (the runtime stops after its current step).
   */
  async stop(key: string | undefined): Promise<void> {
    const run = key ? this.board.list().find((r) => r.key === key) : this.activeRun();
    if (!run?.live) {
      void vscode.window.showInformationMessage('No run is running.');
      return;
    }
    if (this.board.isOwn(run)) {
      await this.manager.stop(run.key, runSettings().stopGraceMs);
      return;
    }
    const outcome = stopElsewhere(run, runLabel(run));
    if (outcome.signalled) run.status = 'stopping';
    else void vscode.window.showWarningMessage(outcome.message);
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

  /**
   * Whether this window has the run's output: it started the run since the window opened (a later run of the same
   * job folder from a terminal is not the run the channel holds).
   */
  hasOutput(run: RunState): boolean {
    return this.channels.has(run.key) && this.board.isOwn(run);
  }

  /** Shows the run's output channel; a run without one here (started elsewhere) is said so, with its dashboard. */
  async showOutput(run: RunState): Promise<void> {
    const shown = this.hasOutput(run) ? this.channels.get(run.key) : undefined;
    if (shown) {
      shown.lines.flush();
      shown.channel.show(true);
      return;
    }
    const where = run.holder
      ? describeHolder(run.holder)
      : run.pid !== undefined
        ? `pid ${run.pid}`
        : 'another window or a terminal';
    const pick = await vscode.window.showInformationMessage(
      `${runLabel(run)} (${where}) was not started in this window: its output went where it was started. Its metrics and rollouts are in its dashboard.`,
      'Open Dashboard',
    );
    if (pick === 'Open Dashboard')
      await vscode.commands.executeCommand('trinityWorkbench.openDashboard', { kind: 'run', run });
  }

  private disposeChannel(key: string): void {
    const c = this.channels.get(key);
    c?.lines.flush();
    c?.channel.dispose();
    this.channels.delete(key);
  }

  /** The live run of the active editor's config, else the most recent live run (from anywhere). */
  activeRun(): RunState | undefined {
    return this.board.activeRun(vscode.window.activeTextEditor?.document.uri.fsPath);
  }

  /** Stops every run this window started (the window is closing). */
  async dispose(): Promise<void> {
    await this.manager.stopAll(Math.min(runSettings().stopGraceMs, 4000));
    for (const key of [...this.channels.keys()]) this.disposeChannel(key);
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
        ...(settings.runNice > 0 ? ['--nice', String(settings.runNice)] : []),
        ...(spec.extraArgs ?? []),
      ],
    });
  }

  private showProgress(run: LiveRun, graceMs: number): void {
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Trinity: ${runLabel(run.state)}`, cancellable: true },
      (progress, token) => {
        let reported = 0;
        let at = 0;
        let shownStatus = run.state.status;
        token.onCancellationRequested(() => void this.manager.stop(run.state.key, graceMs));
        const sub = this.manager.onDidChange((s) => {
          if (s !== run.state) return;
          // Steps at most four times a second; a change of status at once.
          if (s.status === shownStatus && Date.now() - at < 250) return;
          at = Date.now();
          shownStatus = s.status;
          const f = stageFraction(s);
          const increment = f !== undefined && f * 100 > reported ? f * 100 - reported : 0;
          reported += increment;
          progress.report({
            message: s.status === 'stopping' ? 'stopping after the current step…' : describeProgress(s, 'several'),
            increment,
          });
        });
        return run.handle.ended.finally(() => sub.dispose());
      },
    );
  }

  /** "… is already running: Open Dashboard · Stop", for a Run pressed beside a live run (from anywhere). */
  private async alreadyRunning(run: RunState): Promise<void> {
    const who = this.board.isOwn(run)
      ? ''
      : run.holder
        ? ` (${describeHolder(run.holder)})`
        : ` (pid ${run.pid ?? '?'}, started outside this window)`;
    const away = run.holder && !holderIsHere(run.holder) ? run.holder.host : undefined;
    const pick = await vscode.window.showWarningMessage(
      `${runLabel(run)} is already running${who}: ${describeProgress(run, 'several') || run.status}.`,
      'Open Dashboard',
      away ? `Stop on ${away}…` : 'Stop',
    );
    if (pick === 'Open Dashboard')
      await vscode.commands.executeCommand('trinityWorkbench.openDashboard', { kind: 'run', run });
    if (pick?.startsWith('Stop')) await this.stop(run.key);
  }

  /**
   * The runtime refused a run this window started: another run took the job folder first. That run is shown, with
   * what can be done about it, instead of the attempt as a failed run.
   */
  private async refused(attempt: RunState, refusal: JobRefusal): Promise<void> {
    const holding =
      this.board.list().find((r) => r.live && r.key === attempt.key) ??
      readJobRuns(attempt.jobDir).find((r) => r.live && r.key === attempt.key);
    if (holding) return this.alreadyRunning(holding);
    // The holder has ended since: say what happened, and that Run works now.
    void vscode.window.showWarningMessage(
      `${runLabel(attempt)} did not start: ${describeHolder(refusal.holder)} was writing ${attempt.jobDir} and has ended since. Run it again.`,
    );
  }

  /** A run seen live has ended (here or elsewhere): how, with its last numbers, and where to look. */
  private async reportEnd(run: RunState): Promise<void> {
    const own = this.hasOutput(run);
    const text = `Trinity: ${describeEnd(run, runLabel(run))}`;
    const actions = ['Open Dashboard', ...(own ? ['Show Output'] : [])];
    const pick = await (run.status === 'failed'
      ? vscode.window.showErrorMessage(text, ...actions)
      : run.status === 'finished'
        ? vscode.window.showInformationMessage(text, ...actions)
        : vscode.window.showWarningMessage(text, ...actions));
    if (pick === 'Show Output') await this.showOutput(run);
    if (pick === 'Open Dashboard')
      await vscode.commands.executeCommand('trinityWorkbench.openDashboard', { kind: 'run', run });
  }
}

export function runLabel(run: RunState): string {
  return run.configPath ? path.basename(run.configPath).replace(/(\.trinity)?\.ya?ml$/, '') : path.basename(run.jobDir);
}
