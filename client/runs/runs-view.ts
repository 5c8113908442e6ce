/**
 * The Runs view: runs (live ones first) -> stages -> checkpoints. Each item's `contextValue` says what can be done
 * with it (`run:<status>[:live]`, `stage`, `checkpoint`), which package.json's menus key on. Refreshes are batched
 * (a live run changes every step) and the disk is rescanned when a job directory's record or metrics change.
 */
import * as vscode from 'vscode';
import { listRuns } from './run-list';
import type { RunManager } from './run-manager';
import {
  describeProgress,
  formatDuration,
  formatNumber,
  type CheckpointInfo,
  type RunState,
  type RunStatus,
} from './run-state';
import { runLabel } from './run-controller';

export type RunsNode =
  | { kind: 'run'; run: RunState }
  | { kind: 'stage'; run: RunState; index: number }
  | { kind: 'checkpoint'; run: RunState; checkpoint: CheckpointInfo };

const STATUS_ICON: Record<RunStatus, [string, string?]> = {
  starting: ['loading~spin'],
  running: ['sync~spin', 'charts.blue'],
  stopping: ['loading~spin', 'charts.yellow'],
  finished: ['pass', 'testing.iconPassed'],
  stopped: ['debug-stop', 'charts.yellow'],
  failed: ['error', 'testing.iconFailed'],
  interrupted: ['warning', 'charts.orange'],
  unknown: ['circle-outline'],
};

export class RunsView implements vscode.TreeDataProvider<RunsNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<RunsNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private runs: RunState[] = [];
  private scanned = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly shownStatus = new Map<string, string>();
  private readonly disposables: vscode.Disposable[] = [];
  /** Job directories this window ran, kept across windows so they are listed even outside the workspace. */
  private readonly known: Set<string>;

  constructor(
    private readonly manager: RunManager,
    memento: vscode.Memento,
  ) {
    this.known = new Set(memento.get<string[]>('trinityWorkbench.jobDirs', []));
    this.disposables.push(
      manager.onDidChange((s) => {
        if (!this.known.has(s.jobDir)) {
          this.known.add(s.jobDir);
          void memento.update('trinityWorkbench.jobDirs', [...this.known].slice(-200));
        }
        // A run starting, stopping or ending changes what can be done with it: show that at once. Steps are batched.
        const shown = `${s.status}:${s.live}`;
        if (this.shownStatus.get(s.key) !== shown) {
          this.shownStatus.set(s.key, shown);
          this.changed.fire(undefined);
        } else this.schedule(false);
      }),
    );
    for (const pattern of ['**/state/run.json', '**/monitor/metrics.jsonl', '**/monitor/tensorboard/**']) {
      const w = vscode.workspace.createFileSystemWatcher(pattern);
      const rescan = () => this.schedule(true);
      this.disposables.push(w, w.onDidCreate(rescan), w.onDidDelete(rescan), w.onDidChange(rescan));
    }
    this.disposables.push(vscode.workspace.onDidChangeWorkspaceFolders(() => this.schedule(true)));
  }

  /** Rescans the disk now. */
  refresh(): void {
    this.scanned = false;
    this.changed.fire(undefined);
  }

  /** The runs as last listed, scanning the disk first if it was never scanned (commands, CodeLens). */
  current(): RunState[] {
    if (!this.scanned) this.getChildren();
    return this.runs;
  }

  private schedule(rescan: boolean): void {
    if (rescan) this.scanned = false;
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.changed.fire(undefined);
    }, 400);
  }

  getChildren(node?: RunsNode): RunsNode[] {
    if (!node) {
      if (!this.scanned) {
        const roots = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
        this.runs = listRuns(this.manager, roots, this.known);
        this.scanned = true;
      } else {
        // Between rescans, live states change in place; ended runs of this window replace their entry.
        const ended = new Map(this.manager.endedRuns().map((r) => [r.state.key, r.state]));
        const live = new Map(this.manager.liveRuns().map((r) => [r.state.key, r.state]));
        this.runs = this.runs.map((r) => live.get(r.key) ?? ended.get(r.key) ?? r);
        for (const s of live.values()) if (!this.runs.includes(s)) this.runs.unshift(s);
      }
      // No runs: an empty list lets the view's welcome content show.
      return this.runs.map((run) => ({ kind: 'run', run }));
    }
    if (node.kind === 'run') {
      if (node.run.stages.length > 1)
        return node.run.stages.map((_, index) => ({ kind: 'stage', run: node.run, index }));
      return [...node.run.checkpoints]
        .reverse()
        .map((checkpoint) => ({ kind: 'checkpoint', run: node.run, checkpoint }));
    }
    if (node.kind === 'stage') {
      const name = node.run.stages[node.index].name;
      return node.run.checkpoints
        .filter((c) => c.stage === name)
        .reverse()
        .map((checkpoint) => ({ kind: 'checkpoint', run: node.run, checkpoint }));
    }
    return [];
  }

  getTreeItem(node: RunsNode): vscode.TreeItem {
    if (node.kind === 'run') return runItem(node.run);
    if (node.kind === 'stage') {
      const run = node.run;
      const stage = run.stages[node.index];
      const current = run.stage?.index ?? -1;
      const state =
        node.index < current || (node.index === current && run.status === 'finished')
          ? 'done'
          : node.index === current
            ? run.live
              ? 'running'
              : run.status
            : 'pending';
      const item = new vscode.TreeItem(
        `${stage.name}`,
        run.checkpoints.some((c) => c.stage === stage.name)
          ? vscode.TreeItemCollapsibleState.Collapsed
          : vscode.TreeItemCollapsibleState.None,
      );
      item.description = `${stage.mode} · ${state}${node.index === current ? ` · ${describeProgress(run).replace(/^\S+ /, '')}` : ''}`;
      item.iconPath = new vscode.ThemeIcon(
        state === 'done'
          ? 'check'
          : state === 'running'
            ? 'sync~spin'
            : state === 'pending'
              ? 'circle-outline'
              : 'debug-pause',
      );
      item.contextValue = 'stage';
      item.tooltip = stage.jobDir;
      return item;
    }
    const c = node.checkpoint;
    const item = new vscode.TreeItem(`global_step_${c.step}`);
    item.iconPath = new vscode.ThemeIcon('save');
    item.description = c.stage ?? '';
    item.tooltip = c.path;
    item.resourceUri = vscode.Uri.file(c.path);
    item.contextValue = 'checkpoint';
    item.command = { command: 'revealInExplorer', title: 'Reveal', arguments: [vscode.Uri.file(c.path)] };
    return item;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.changed.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

function runItem(run: RunState): vscode.TreeItem {
  const hasChildren = run.stages.length > 1 || run.checkpoints.length > 0;
  const item = new vscode.TreeItem(
    runLabel(run),
    hasChildren ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
  );
  item.id = run.key;
  const [icon, color] = STATUS_ICON[run.status];
  item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
  const duration = run.startedAt
    ? formatDuration((run.live ? Date.now() : (run.endedAt ?? run.startedAt)) - run.startedAt)
    : '';
  item.description = [run.status, describeProgress(run), duration].filter(Boolean).join(' · ');
  const md = new vscode.MarkdownString(undefined, true);
  md.appendMarkdown(`**${runLabel(run)}** — ${run.status}${run.runWith !== 'local' ? ` (${run.runWith})` : ''}\n\n`);
  if (run.stage)
    md.appendMarkdown(`Stage ${run.stage.index + 1}/${run.stage.count}: ${run.stage.name} (${run.stage.mode})\n\n`);
  for (const [role, p] of Object.entries(run.progress))
    md.appendMarkdown(
      `${role}: step ${p.step}${p.total ? ` of ${p.total}` : ''}${p.detail ? ` — ${p.detail}` : ''}\n\n`,
    );
  if (run.reward !== undefined) md.appendMarkdown(`Latest reward: ${formatNumber(run.reward)}\n\n`);
  if (run.loss !== undefined) md.appendMarkdown(`Latest loss: ${formatNumber(run.loss)}\n\n`);
  if (run.evalAccuracy)
    md.appendMarkdown(`Eval accuracy (${run.evalAccuracy.name}): ${formatNumber(run.evalAccuracy.value)}\n\n`);
  if (duration) md.appendMarkdown(`Duration: ${duration}\n\n`);
  if (run.error) md.appendCodeblock(run.error.slice(0, 1500), 'text');
  md.appendMarkdown(`\`${run.jobDir}\``);
  item.tooltip = md;
  item.contextValue = `run:${run.status}${run.live ? ':live' : ''}${run.configPath ? ':config' : ''}`;
  return item;
}

export function runOfNode(node: unknown): RunState | undefined {
  const n = node as RunsNode | undefined;
  return n && typeof n === 'object' && 'run' in n ? n.run : undefined;
}
