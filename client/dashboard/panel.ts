/**
 * The dashboard panels (vscode): one WebviewPanel per run, revealed when already open. On the webview's `ready`
 * (first load, and every reload after it was hidden: there is no `retainContextWhenHidden`) the panel sends `init`
 * built from the run's events so far, or from its job directory for a run this window did not start; after that a
 * live run's metrics stream as batched `append`s, and a run on disk is polled for new rows. A reload of the window
 * restores the panel through the serializer, from the run key and job directory the webview keeps in its state.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { MetricsReader } from '../../runtime/metrics/job-metrics';
import type { RuntimeEvent } from '../../runtime/protocol';
import { readRunRecords } from '../../runtime/run-records';
import { jobCheckpoints } from '../runs/job-dirs';
import { exportFilters, writeExport } from './export-file';
import type { RunBoard } from '../runs/run-board';
import type { RunManager } from '../runs/run-manager';
import { describeProgress, type RunState } from '../runs/run-state';
import { Coalescer } from './coalesce';
import { dashboardHtml, newNonce } from './html';
import { findNode } from '../runs/node-path';
import { runSettings } from '../runs/run-settings';
import {
  BufferChanges,
  ROLLOUT_FILES_ORIGIN,
  RolloutsOnDiskFollower,
  readBufferRollouts,
  rolloutsInEvents,
  rolloutsOfJob,
} from './job-rollouts';
import {
  parsePanelState,
  parseWebviewMessage,
  type CheckpointMark,
  type DashboardRun,
  type ExportMessage,
  type HostMessage,
  type MetricPoint,
  type Series,
} from './messages';
import { runConfigMessage, runConfigPath, type ResolvedRunConfig } from './run-config';
import type { ResolvedConfigResponse } from '../../server/lsp-messages';
import {
  evalRolloutsOfEvents,
  latestRolloutsOfEvents,
  pointsOfEvent,
  rolloutsOfEvent,
  seriesOfEvents,
  seriesOfRows,
  stageOf,
} from './series';

/** How many steps of rollouts a run on disk sends its panel. */
const ROLLOUT_STEPS = 20;

export const DASHBOARD_VIEW_TYPE = 'trinityWorkbench.dashboard';
const BESIDE_KEEPING_FOCUS = { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true };

/** How often a run on disk (not started by this window) is read for new rows while its panel is visible. */
const DISK_POLL_MS = 2000;

/** How often an experience buffer shown in a panel is looked at for changes: each read starts a Node process. */
const BUFFER_POLL_MS = 10_000;

/**
 * What the panels need from the language server: the keys that drive each tag, showing a key in the config, and a
 * config file resolved (the Config tab; a run's experience buffer).
 */
export interface ConfigLinks {
  drivers(tags: string[], configPath: string | undefined): Promise<Record<string, string[]>>;
  reveal(configPath: string, key: string): Promise<void>;
  resolve(configPath: string): Promise<ResolvedConfigResponse | null>;
}

export interface DashboardTarget {
  key: string;
  jobDir: string;
  title: string;
  /** The config the run was started with, when this window knows it (a Trinity run keeps no record naming it). */
  configPath?: string;
}

export class DashboardPanels implements vscode.Disposable {
  private readonly open = new Map<string, Dashboard>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly manager: RunManager,
    private readonly links?: ConfigLinks,
    private readonly board?: RunBoard,
  ) {
    if (board)
      this.disposables.push({ dispose: board.onDidChange(() => this.open.forEach((d) => d.boardChanged())).dispose });
    this.disposables.push(
      manager.onEvent((run, e) => {
        for (const d of this.open.values()) d.event(run.key, e);
      }),
      manager.onDidChange((run) => {
        for (const d of this.open.values()) d.status(run);
      }),
      vscode.window.registerWebviewPanelSerializer(DASHBOARD_VIEW_TYPE, {
        deserializeWebviewPanel: async (panel, state) => {
          const saved = parsePanelState(state);
          if (!saved) return panel.dispose();
          if (saved.compare)
            this.adopt(
              panel,
              saved.compare.map((r) => ({ ...r, title: this.titleOf(r.key, r.jobDir) })),
              true,
            );
          else this.adopt(panel, [{ ...saved, title: this.titleOf(saved.key, saved.jobDir) }], false);
        },
      }),
    );
  }

  /**
   * Opens (or reveals) the dashboard of a run beside the editor, which keeps the focus: VS Code opens a file from the
   * Explorer in the active group, and a focused dashboard would make its group that one (the config would open a
   * second time, beside the dashboard).
   */
  show(run: RunState, title: string): void {
    const existing = this.open.get(run.key);
    if (existing) return existing.panel.reveal(undefined, true);
    const panel = vscode.window.createWebviewPanel(
      DASHBOARD_VIEW_TYPE,
      `Dashboard: ${title}`,
      BESIDE_KEEPING_FOCUS,
      this.options(),
    );
    this.adopt(panel, [{ key: run.key, jobDir: run.jobDir, title, configPath: run.configPath }], false);
  }

  /** Opens (or reveals) one panel overlaying several runs, in the order given (their colours). */
  compare(runs: readonly { run: RunState; title: string }[]): void {
    const key = compareKey(runs.map((r) => r.run.key));
    const existing = this.open.get(key);
    if (existing) return existing.panel.reveal(undefined, true);
    const panel = vscode.window.createWebviewPanel(
      DASHBOARD_VIEW_TYPE,
      `Compare: ${runs.length} runs`,
      BESIDE_KEEPING_FOCUS,
      this.options(),
    );
    this.adopt(
      panel,
      runs.map((r) => ({ key: r.run.key, jobDir: r.run.jobDir, title: r.title, configPath: r.run.configPath })),
      true,
    );
  }

  private titleOf(key: string, jobDir: string): string {
    const live = this.manager.get(key);
    const config = live?.state.configPath;
    return config ? path.basename(config).replace(/(\.trinity)?\.ya?ml$/, '') : path.basename(jobDir);
  }

  private options(): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return {
      enableScripts: true,
      localResourceRoots: [
        vscode.Uri.joinPath(this.extensionUri, 'media'),
        vscode.Uri.joinPath(this.extensionUri, 'dist'),
      ],
    };
  }

  private adopt(panel: vscode.WebviewPanel, targets: DashboardTarget[], compare: boolean): void {
    panel.webview.options = this.options();
    const title = compare ? `Compare: ${targets.map((t) => t.title).join(', ')}` : `Dashboard: ${targets[0].title}`;
    panel.title = compare ? `Compare: ${targets.length} runs` : title;
    const key = compare ? compareKey(targets.map((t) => t.key)) : targets[0].key;
    const media = vscode.Uri.joinPath(this.extensionUri, 'dist', 'media');
    panel.webview.html = dashboardHtml({
      cspSource: panel.webview.cspSource,
      nonce: newNonce(),
      scriptUri: panel.webview.asWebviewUri(vscode.Uri.joinPath(media, 'dashboard.js')).toString(),
      styleUri: panel.webview.asWebviewUri(vscode.Uri.joinPath(media, 'dashboard.css')).toString(),
      title,
    });
    const dashboard = new Dashboard(
      panel,
      targets,
      compare,
      this.manager,
      vscode.Uri.joinPath(this.extensionUri, 'dist', 'cli.js').fsPath,
      (k) => this.elsewhere(k),
      this.links,
    );
    this.open.set(key, dashboard);
    panel.onDidDispose(() => {
      dashboard.dispose();
      if (this.open.get(key) === dashboard) this.open.delete(key);
    });
  }

  /**
   * The run the board has for `key` when it is not this window's: a terminal's or another window's run of the same
   * job, newer than any this window ran there. Its job folder, not this window's ended run, is then the truth.
   */
  private elsewhere(key: string): RunState | undefined {
    const run = this.board?.list().find((r) => r.key === key);
    return run && !this.board!.isOwn(run) ? run : undefined;
  }

  dispose(): void {
    for (const d of this.open.values()) d.panel.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

/** A compare panel's key among the open panels: its runs, in order. */
function compareKey(keys: readonly string[]): string {
  return `compare:${keys.join('\u0000')}`;
}

interface DiskRun {
  reader: MetricsReader;
  t0: number;
  jobDir: string;
  /** A single run's panel follows its rollout files too. */
  rollouts?: RolloutsOnDiskFollower;
}

/** One panel's conversation with its webview: one run, or (compare) several, each series tagged with its run. */
class Dashboard {
  /** The webview said `ready` and has its `init`: appends may follow. */
  private ready = false;
  /** The panel's runs on disk (not live in this window), by key. */
  private readonly disk = new Map<string, DiskRun>();
  private poll: NodeJS.Timeout | undefined;
  /** Looks for a change of the experience buffer whose episodes the panel shows (a Trinity-RFT run's). */
  private bufferPoll: NodeJS.Timeout | undefined;
  /** How many times the webview said `ready`: a reply that comes late goes only to the webview that asked. */
  private inits = 0;
  private readonly outbox: Coalescer<HostMessage>;
  private readonly subs: vscode.Disposable[] = [];
  /** Tags whose driving keys were asked for since the last `init`. */
  private readonly tagsAsked = new Set<string>();
  /** The checkpoints sent so far (the timeline's marks; a single run's panel only). */
  private checkpoints: CheckpointMark[] = [];

  constructor(
    readonly panel: vscode.WebviewPanel,
    private readonly targets: readonly DashboardTarget[],
    private readonly isCompare: boolean,
    private readonly manager: RunManager,
    private readonly cliPath: string,
    private readonly elsewhere: (key: string) => RunState | undefined,
    private readonly links?: ConfigLinks,
  ) {
    this.outbox = new Coalescer((batch) => this.flush(batch), 100);
    this.subs.push(
      panel.webview.onDidReceiveMessage((data) => {
        const m = parseWebviewMessage(data);
        if (m?.type === 'ready') this.init();
        else if (m?.type === 'revealKey') {
          const config = this.configPath();
          if (config && this.links) void this.links.reveal(config, m.key);
          else
            void vscode.window.showWarningMessage(
              `The config of ${this.targets[0].jobDir} is not known: open it to find ${m.key}.`,
            );
        } else if (m?.type === 'export') void this.saveExport(m);
      }),
      // Hidden, the webview is gone: nothing is sent until it is shown again and says `ready`.
      panel.onDidChangeViewState(() => {
        if (!panel.visible) this.pause();
      }),
    );
  }

  /** The (first) run's config file: the live run's, the one this window knows, else the one its record names. */
  private configPath(): string | undefined {
    const t = this.targets[0];
    return (
      this.manager.get(t.key)?.state.configPath ??
      t.configPath ??
      readRunRecords(t.jobDir).find((r) => r.record.config)?.record.config
    );
  }

  /** Asks once per tag which keys drive it, and tells the webview. */
  private askDrivers(tags: Iterable<string>): void {
    if (!this.links) return;
    const fresh = [...new Set(tags)].filter((t) => !this.tagsAsked.has(t));
    if (!fresh.length) return;
    for (const t of fresh) this.tagsAsked.add(t);
    const initAt = this.inits;
    this.links.drivers(fresh, this.configPath()).then(
      (drivers) => {
        if (this.ready && this.inits === initAt)
          void this.panel.webview.postMessage({ type: 'drivers', drivers } satisfies HostMessage);
      },
      () => fresh.forEach((t) => this.tagsAsked.delete(t)),
    );
  }

  private has(key: string): boolean {
    return this.targets.some((t) => t.key === key);
  }

  /** In a compare panel, a point or series names its run. */
  private tag<T extends { source?: string }>(key: string, x: T): T {
    return this.isCompare ? { ...x, source: key } : x;
  }

  event(key: string, e: RuntimeEvent): void {
    if (!this.ready || !this.has(key)) return;
    // Run again into the same job folder: the panel shows the new run from its start, not on top of the last one.
    if (e.type === 'run') return this.init();
    // The run's state has taken the event in already: its stage is the one this event belongs to.
    const stage = stageOf(this.manager.get(key)?.state.stage);
    if (e.type === 'metrics') {
      this.outbox.push({ type: 'append', points: pointsOfEvent(e, stage).map((p) => this.tag(key, p)) });
      this.askDrivers(Object.keys(e.values));
    } else if (e.type === 'rollouts' && !this.isCompare) {
      this.outbox.push({ type: 'rollouts', ...rolloutsOfEvent(e) });
    } else if (e.type === 'checkpoint' && !this.isCompare)
      this.noteCheckpoints([{ step: e.step, path: e.path, stage }]);
  }

  /** Adds checkpoints not sent yet, and sends the whole list when there are any. */
  private noteCheckpoints(
    found: readonly { step: number; path: string; stage?: string }[],
    post = (m: HostMessage) => this.outbox.push(m),
  ): void {
    const id = (c: CheckpointMark) => `${c.stage ?? ''}:${c.step}:${c.name}`;
    const known = new Set(this.checkpoints.map(id));
    const added = found
      .map((c) => ({ step: c.step, name: path.basename(c.path), ...(c.stage === undefined ? {} : { stage: c.stage }) }))
      .filter((c) => !known.has(id(c)));
    if (!added.length) return;
    this.checkpoints = [...this.checkpoints, ...added].sort((a, b) => a.step - b.step);
    post({ type: 'checkpoints', checkpoints: this.checkpoints });
  }

  status(run: RunState): void {
    if (!this.ready || !this.has(run.key) || this.isCompare) return;
    if (this.elsewhere(run.key)) return;
    this.outbox.push({ type: 'status', status: run.status, detail: describeProgress(run, 'several') });
  }

  /**
   * The run board changed. When the job this panel shows is run again from elsewhere (a terminal, another window)
   * after this window's run of it ended, the panel starts over from the job folder, which that run writes, and shows
   * that run's status from then on.
   */
  boardChanged(): void {
    if (!this.ready || this.isCompare) return;
    const key = this.targets[0].key;
    const run = this.elsewhere(key);
    if (!run) return;
    if (!this.disk.has(key)) this.init();
    this.outbox.push({ type: 'status', status: run.status, detail: describeProgress(run, 'several') });
  }

  /** This window's run of `key`, unless a newer run of the same job from elsewhere is the truth (see boardChanged). */
  private ownRun(key: string) {
    return this.elsewhere(key) ? undefined : this.manager.get(key);
  }

  private init(): void {
    this.pause();
    this.inits++;
    this.checkpoints = [];
    const post = (m: HostMessage) => void this.panel.webview.postMessage(m);
    const runs: DashboardRun[] = [];
    const series: Series[] = [];
    for (const t of this.targets) {
      const live = this.ownRun(t.key);
      if (live) {
        const s = live.state;
        runs.push({
          key: s.key,
          jobDir: s.jobDir,
          title: t.title,
          status: s.status,
          ...(s.startedAt === undefined ? {} : { startedAt: s.startedAt / 1000 }),
        });
        series.push(...seriesOfEvents(live.events).map((x) => this.tag(t.key, x)));
      } else {
        const reader = new MetricsReader([t.jobDir]);
        const rows = reader.read().rows;
        const t0 = Math.min(...rows.flatMap((r) => (r.wallTime === null ? [] : [r.wallTime])));
        this.disk.set(t.key, {
          reader,
          t0: Number.isFinite(t0) ? t0 : Date.now() / 1000,
          jobDir: t.jobDir,
          ...(this.isCompare ? {} : { rollouts: new RolloutsOnDiskFollower(t.jobDir, ROLLOUT_STEPS) }),
        });
        // seriesOfRows measures times from the earliest wall time too: that is when the run started.
        runs.push({
          key: t.key,
          jobDir: t.jobDir,
          title: t.title,
          status: 'on disk',
          ...(Number.isFinite(t0) ? { startedAt: t0 } : {}),
        });
        series.push(...seriesOfRows(rows).map((x) => this.tag(t.key, x)));
      }
    }
    if (this.isCompare) {
      const panelRun: DashboardRun = {
        key: compareKey(runs.map((r) => r.key)),
        jobDir: runs[0].jobDir,
        title: `Compare: ${runs.map((r) => r.title).join(', ')}`,
        status: `${runs.length} runs`,
      };
      post({ type: 'init', run: panelRun, series, compare: runs });
    } else post({ type: 'init', run: runs[0], series });
    this.ready = true;
    const configs = this.resolveConfigs();
    this.askDrivers(series.map((x) => x.tag));
    if (!this.isCompare) {
      const t = this.targets[0];
      const live = this.ownRun(t.key);
      if (live && rolloutsInEvents(live.state.runWith)) {
        const rollouts = latestRolloutsOfEvents(live.events);
        if (rollouts) post({ type: 'rollouts', ...rollouts });
        for (const r of evalRolloutsOfEvents(live.events)) post({ type: 'rollouts', ...r });
      } else {
        const initAt = this.inits;
        void configs.then((c) => {
          if (this.ready && this.inits === initAt) this.rolloutsOnDisk(t, c[0], post);
        });
      }
      if (live) {
        // A live run's checkpoints name their stage even when it has one: only a staged run's marks say it.
        const staged = live.state.stages.length > 1;
        this.noteCheckpoints(
          live.state.checkpoints.map((c) => ({ step: c.step, path: c.path, stage: staged ? c.stage : undefined })),
          post,
        );
        post({ type: 'status', status: live.state.status, detail: describeProgress(live.state, 'several') });
      } else this.noteCheckpoints(jobCheckpoints(t.jobDir), post);
    }
    if (this.disk.size) this.poll = setInterval(() => this.readDisk(), DISK_POLL_MS);
  }

  /** Asks the server for each run's config and posts the Config tab (to the webview that asked) when all answered. */
  private resolveConfigs(): Promise<ResolvedRunConfig[]> {
    const initAt = this.inits;
    const links = this.links;
    const configs = Promise.all(
      this.targets.map(async (t) => {
        const path = runConfigPath(t.jobDir, this.manager.get(t.key)?.state.configPath ?? t.configPath);
        if (!path) return runConfigMessage(t.key, t.jobDir, undefined, null);
        const answer = links
          ? await links.resolve(path).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))))
          : new Error('the language server is not running');
        return runConfigMessage(t.key, t.jobDir, path, answer);
      }),
    );
    void configs.then((c) => {
      if (this.ready && this.inits === initAt)
        void this.panel.webview.postMessage({ type: 'config', runs: c.map((x) => x.message) } satisfies HostMessage);
    });
    return configs;
  }

  /** Our runtime's monitor/rollouts.jsonl, else a Trinity run's SQLite experience buffer (read by a Node 20 process). */
  private rolloutsOnDisk(t: DashboardTarget, config: ResolvedRunConfig, post: (m: HostMessage) => void): void {
    const found = rolloutsOfJob(t.jobDir, config.resolved[0], config.configDir, ROLLOUT_STEPS);
    if (!found) return;
    if ('steps' in found) {
      this.disk.get(t.key)?.rollouts?.saw(found.steps);
      for (const r of found.steps) post({ type: 'rollouts', ...r, origin: found.origin });
      return;
    }
    const node = findNode(runSettings().nodePath, process.env);
    if ('error' in node) return;
    const initAt = this.inits;
    const read = () =>
      readBufferRollouts(node.path, this.cliPath, found.buffer, ROLLOUT_STEPS, found.model).then(({ steps, note }) => {
        // Posted only to the webview that asked (not after it was hidden or reloaded); why tokens show as ids, with it.
        const origin = note ? `${found.origin}: ${note}` : found.origin;
        if (this.ready && this.inits === initAt) for (const r of steps) post({ type: 'rollouts', ...r, origin });
      });
    // A run still writing its buffer (live, or elsewhere) is read again when the buffer changes, one read at a time.
    const changes = new BufferChanges(found.buffer.file);
    let reading = true;
    void read().finally(() => (reading = false));
    this.bufferPoll = setInterval(() => {
      if (reading || !changes.changed()) return;
      reading = true;
      void read().finally(() => (reading = false));
    }, BUFFER_POLL_MS);
  }

  private readDisk(): void {
    for (const [key, disk] of this.disk) {
      if (this.ownRun(key)) continue;
      const { rows, purges } = disk.reader.read();
      if (purges.length) {
        // The run restarted from a checkpoint: its abandoned points go, so the panel starts over from the files.
        this.init();
        return;
      }
      const t0 = disk.t0;
      this.askDrivers(rows.map((r) => r.tag));
      if (!this.isCompare) this.noteCheckpoints(jobCheckpoints(disk.jobDir));
      for (const r of disk.rollouts?.read() ?? [])
        this.outbox.push({ type: 'rollouts', ...r, origin: ROLLOUT_FILES_ORIGIN });
      if (rows.length)
        this.outbox.push({
          type: 'append',
          points: rows.map((r) =>
            this.tag<MetricPoint>(key, {
              run: r.run,
              tag: r.tag,
              step: r.step,
              time: r.wallTime === null ? 0 : r.wallTime - t0,
              value: Number.isFinite(r.value) ? r.value : null,
            }),
          ),
        });
    }
  }

  /** Asks where to save a card's CSV or PNG (next to the job by default) and writes it. */
  private async saveExport(m: ExportMessage): Promise<void> {
    const uri = await vscode.window.showSaveDialog({
      defaultUri: vscode.Uri.file(path.join(this.targets[0].jobDir, m.fileName)),
      filters: exportFilters(m.format),
      title: `Export ${m.format.toUpperCase()}`,
    });
    if (!uri) return;
    try {
      writeExport(uri.fsPath, m);
    } catch (e) {
      void vscode.window.showErrorMessage(
        `Could not export ${m.fileName}: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
  }

  /** One batch: all points in one `append`, the latest step's rollouts, every evaluation's, checkpoints and status. */
  private flush(batch: HostMessage[]): void {
    const points: MetricPoint[] = [];
    let rollouts: HostMessage | undefined;
    const evals: HostMessage[] = [];
    let status: HostMessage | undefined;
    let checkpoints: HostMessage | undefined;
    for (const m of batch) {
      if (m.type === 'append') points.push(...m.points);
      else if (m.type === 'rollouts' && m.eval) evals.push(m);
      else if (m.type === 'rollouts') rollouts = m;
      else if (m.type === 'status') status = m;
      else if (m.type === 'checkpoints') checkpoints = m;
    }
    if (points.length) void this.panel.webview.postMessage({ type: 'append', points } satisfies HostMessage);
    if (rollouts) void this.panel.webview.postMessage(rollouts);
    for (const m of evals) void this.panel.webview.postMessage(m);
    if (checkpoints) void this.panel.webview.postMessage(checkpoints);
    if (status) void this.panel.webview.postMessage(status);
  }

  private pause(): void {
    this.ready = false;
    this.tagsAsked.clear();
    this.outbox.dispose();
    if (this.poll) clearInterval(this.poll);
    this.poll = undefined;
    if (this.bufferPoll) clearInterval(this.bufferPoll);
    this.bufferPoll = undefined;
    this.disk.clear();
  }

  dispose(): void {
    this.pause();
    for (const s of this.subs) s.dispose();
  }
}
