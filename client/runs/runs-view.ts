/**
 * The Runs view: runs (live ones first) -> stages -> checkpoints, as the run board lists them (this window's runs and
 * every job folder's, watched). Each item's `contextValue` says what can be done with it (`run:<status>[:live]`,
 * `stage`, `checkpoint`), which package.json's menus key on. Refreshes are batched (a live run changes every step).
 */
import * as vscode from 'vscode';
import type { RunBoard } from './run-board';
import {
  describeProgress,
  formatDuration,
  holderIsHere,
  type CheckpointInfo,
  type RunState,
  type RunStatus,
} from './run-state';
import { runLabel } from './run-controller';
import { runTooltip } from './run-tooltip';

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
  private timer: NodeJS.Timeout | undefined;
  private shown = '';
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly board: RunBoard) {
    this.disposables.push({ dispose: board.onDidChange(() => this.boardChanged()).dispose });
    // New job folders of any run (this window's, a terminal's, another window's) are found at once.
    for (const pattern of [
      '**/state/run*.json',
      '**/state/lock*.json',
      '**/monitor/metrics.jsonl',
      '**/monitor/tensorboard/**',
    ]) {
      const w = vscode.workspace.createFileSystemWatcher(pattern);
      const rescan = () => board.rescan();
      this.disposables.push(w, w.onDidCreate(rescan), w.onDidDelete(rescan));
    }
    this.disposables.push(vscode.workspace.onDidChangeWorkspaceFolders(() => board.rescan()));
  }

  /** Rescans the disk now. */
  refresh(): void {
    this.board.rescan();
    this.changed.fire(undefined);
  }

  /** The runs as the board lists them (commands, CodeLens). */
  current(): RunState[] {
    return this.board.list();
  }

  /** A run appearing, starting, stopping or ending shows at once; a live run's steps at most every 300 ms. */
  private boardChanged(): void {
    const runs = this.board.list();
    const shown = runs.map((r) => `${r.key}:${r.status}:${r.live}`).join('|');
    if (shown !== this.shown) {
      this.shown = shown;
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
      this.changed.fire(undefined);
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.changed.fire(undefined);
    }, 300);
  }

  getChildren(node?: RunsNode): RunsNode[] {
    // No runs: an empty list lets the view's welcome content show.
    if (!node) return this.board.list().map((run) => ({ kind: 'run', run }));
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
      const numbers = node.index === current ? describeProgress(run, 'never') : '';
      item.description = [stage.mode, state, numbers].filter(Boolean).join(' · ');
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
  const away = run.holder && !holderIsHere(run.holder) ? `on ${run.holder.host}` : '';
  item.description = [run.status, away, describeProgress(run, 'several'), duration].filter(Boolean).join(' · ');
  item.tooltip = new vscode.MarkdownString(runTooltip(run, runLabel(run), duration), true);
  item.contextValue = `run:${run.status}${run.live ? ':live' : ''}${run.configPath ? ':config' : ''}`;
  return item;
}

export function runOfNode(node: unknown): RunState | undefined {
  const n = node as RunsNode | undefined;
  return n && typeof n === 'object' && 'run' in n ? n.run : undefined;
}
