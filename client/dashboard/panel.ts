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
import type { RunManager } from '../runs/run-manager';
import { checkpointsIn } from '../runs/job-dirs';
import { describeProgress, type RunState } from '../runs/run-state';
import { Coalescer } from './coalesce';
import { exportFilters, writeExport } from './export-file';
import { dashboardHtml, newNonce } from './html';
import { parsePanelState, parseWebviewMessage, type CheckpointMark, type ExportMessage, type HostMessage, type MetricPoint } from './messages';
import { latestRolloutsOfEvents, latestRolloutsOnDisk, pointsOfEvent, seriesOfEvents, seriesOfRows } from './series';

export const DASHBOARD_VIEW_TYPE = 'trinityWorkbench.dashboard';

/** How often a run on disk (not started by this window) is read for new rows while its panel is visible. */
const DISK_POLL_MS = 2000;

export interface DashboardTarget {
  key: string;
  jobDir: string;
  title: string;
}

export class DashboardPanels implements vscode.Disposable {
  private readonly open = new Map<string, Dashboard>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly manager: RunManager,
  ) {
    this.disposables.push(
      manager.onEvent((run, e) => this.open.get(run.key)?.event(e)),
      manager.onDidChange((run) => this.open.get(run.key)?.status(run)),
      vscode.window.registerWebviewPanelSerializer(DASHBOARD_VIEW_TYPE, {
        deserializeWebviewPanel: async (panel, state) => {
          const saved = parsePanelState(state);
          if (!saved) return panel.dispose();
          this.adopt(panel, { ...saved, title: this.titleOf(saved.key, saved.jobDir) });
        },
      }),
    );
  }

  /** Opens (or reveals) the dashboard of a run. */
  show(run: RunState, title: string): void {
    const existing = this.open.get(run.key);
    if (existing) return existing.panel.reveal();
    const panel = vscode.window.createWebviewPanel(DASHBOARD_VIEW_TYPE, `Dashboard: ${title}`, vscode.ViewColumn.Beside, this.options());
    this.adopt(panel, { key: run.key, jobDir: run.jobDir, title });
  }

  private titleOf(key: string, jobDir: string): string {
    const live = this.manager.get(key);
    const config = live?.state.configPath;
    return config ? path.basename(config).replace(/(\.trinity)?\.ya?ml$/, '') : path.basename(jobDir);
  }

  private options(): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'media'), vscode.Uri.joinPath(this.extensionUri, 'dist')] };
  }

  private adopt(panel: vscode.WebviewPanel, target: DashboardTarget): void {
    panel.webview.options = this.options();
    panel.title = `Dashboard: ${target.title}`;
    const media = vscode.Uri.joinPath(this.extensionUri, 'dist', 'media');
    panel.webview.html = dashboardHtml({
      cspSource: panel.webview.cspSource,
      nonce: newNonce(),
      scriptUri: panel.webview.asWebviewUri(vscode.Uri.joinPath(media, 'dashboard.js')).toString(),
      styleUri: panel.webview.asWebviewUri(vscode.Uri.joinPath(media, 'dashboard.css')).toString(),
      title: `Dashboard: ${target.title}`,
    });
    const dashboard = new Dashboard(panel, target, this.manager);
    this.open.set(target.key, dashboard);
    panel.onDidDispose(() => {
      dashboard.dispose();
      if (this.open.get(target.key) === dashboard) this.open.delete(target.key);
    });
  }

  dispose(): void {
    for (const d of this.open.values()) d.panel.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

/** One panel's conversation with its webview. */
class Dashboard {
  /** The webview said `ready` and has its `init`: appends may follow. */
  private ready = false;
  private disk: { reader: MetricsReader; t0: number } | undefined;
  private poll: NodeJS.Timeout | undefined;
  private readonly outbox: Coalescer<HostMessage>;
  private readonly subs: vscode.Disposable[] = [];
  /** The checkpoints sent so far (the timeline's marks). */
  private checkpoints: CheckpointMark[] = [];

  constructor(
    readonly panel: vscode.WebviewPanel,
    private readonly target: DashboardTarget,
    private readonly manager: RunManager,
  ) {
    this.outbox = new Coalescer((batch) => this.flush(batch), 100);
    this.subs.push(
      panel.webview.onDidReceiveMessage((data) => {
        const m = parseWebviewMessage(data);
        if (m?.type === 'ready') this.init();
        else if (m?.type === 'export') void this.saveExport(m);
      }),
      // Hidden, the webview is gone: nothing is sent until it is shown again and says `ready`.
      panel.onDidChangeViewState(() => {
        if (!panel.visible) this.pause();
      }),
    );
  }

  event(e: RuntimeEvent): void {
    if (!this.ready) return;
    if (e.type === 'metrics') this.outbox.push({ type: 'append', points: pointsOfEvent(e) });
    else if (e.type === 'rollouts') {
      const r = latestRolloutsOfEvents([e])!;
      this.outbox.push({ type: 'rollouts', ...r });
    } else if (e.type === 'checkpoint') this.noteCheckpoints([{ step: e.step, path: e.path }]);
  }

  status(run: RunState): void {
    if (this.ready) this.outbox.push({ type: 'status', status: run.status, detail: describeProgress(run) });
  }

  /** Adds checkpoints not sent yet, and sends the whole list when there are any. */
  private noteCheckpoints(found: readonly { step: number; path: string }[], post = (m: HostMessage) => this.outbox.push(m)): void {
    const known = new Set(this.checkpoints.map((c) => `${c.step}:${c.name}`));
    const added = found.map((c) => ({ step: c.step, name: path.basename(c.path) })).filter((c) => !known.has(`${c.step}:${c.name}`));
    if (!added.length) return;
    this.checkpoints = [...this.checkpoints, ...added].sort((a, b) => a.step - b.step);
    post({ type: 'checkpoints', checkpoints: this.checkpoints });
  }

  private init(): void {
    this.pause();
    this.checkpoints = [];
    const live = this.manager.get(this.target.key);
    const post = (m: HostMessage) => void this.panel.webview.postMessage(m);
    if (live) {
      const s = live.state;
      post({ type: 'init', run: { key: s.key, jobDir: s.jobDir, title: this.target.title, status: s.status, ...(s.startedAt === undefined ? {} : { startedAt: s.startedAt / 1000 }) }, series: seriesOfEvents(live.events) });
      const rollouts = latestRolloutsOfEvents(live.events);
      if (rollouts) post({ type: 'rollouts', ...rollouts });
      this.noteCheckpoints(s.checkpoints, post);
      post({ type: 'status', status: s.status, detail: describeProgress(s) });
    } else {
      const reader = new MetricsReader([this.target.jobDir]);
      const rows = reader.read().rows;
      const t0 = Math.min(...rows.flatMap((r) => (r.wallTime === null ? [] : [r.wallTime])));
      this.disk = { reader, t0: Number.isFinite(t0) ? t0 : Date.now() / 1000 };
      // seriesOfRows measures times from the earliest wall time too: that is when the run started.
      post({ type: 'init', run: { key: this.target.key, jobDir: this.target.jobDir, title: this.target.title, status: 'on disk', ...(Number.isFinite(t0) ? { startedAt: t0 } : {}) }, series: seriesOfRows(rows) });
      const rollouts = latestRolloutsOnDisk(this.target.jobDir);
      if (rollouts) post({ type: 'rollouts', ...rollouts });
      this.noteCheckpoints(checkpointsIn(this.target.jobDir), post);
      this.poll = setInterval(() => this.readDisk(), DISK_POLL_MS);
    }
    this.ready = true;
  }

  /** Asks where to save a card's CSV or PNG (next to the job by default) and writes it. */
  private async saveExport(m: ExportMessage): Promise<void> {
    const uri = await vscode.window.showSaveDialog({ defaultUri: vscode.Uri.file(path.join(this.target.jobDir, m.fileName)), filters: exportFilters(m.format), title: `Export ${m.format.toUpperCase()}` });
    if (!uri) return;
    try {
      writeExport(uri.fsPath, m);
    } catch (e) {
      void vscode.window.showErrorMessage(`Could not export ${m.fileName}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private readDisk(): void {
    if (!this.disk || this.manager.get(this.target.key)) return;
    const { rows } = this.disk.reader.read();
    this.noteCheckpoints(checkpointsIn(this.target.jobDir));
    const t0 = this.disk.t0;
    if (rows.length) this.outbox.push({ type: 'append', points: rows.map((r) => ({ run: r.run, tag: r.tag, step: r.step, time: r.wallTime === null ? 0 : r.wallTime - t0, value: Number.isFinite(r.value) ? r.value : null })) });
  }

  /** One batch: all points in one `append`, the latest rollouts and status. */
  private flush(batch: HostMessage[]): void {
    const points: MetricPoint[] = [];
    let rollouts: HostMessage | undefined;
    let status: HostMessage | undefined;
    let checkpoints: HostMessage | undefined;
    for (const m of batch) {
      if (m.type === 'append') points.push(...m.points);
      else if (m.type === 'rollouts') rollouts = m;
      else if (m.type === 'status') status = m;
      else if (m.type === 'checkpoints') checkpoints = m;
    }
    if (points.length) void this.panel.webview.postMessage({ type: 'append', points } satisfies HostMessage);
    if (rollouts) void this.panel.webview.postMessage(rollouts);
    if (status) void this.panel.webview.postMessage(status);
    if (checkpoints) void this.panel.webview.postMessage(checkpoints);
  }

  private pause(): void {
    this.ready = false;
    this.outbox.dispose();
    if (this.poll) clearInterval(this.poll);
    this.poll = undefined;
  }

  dispose(): void {
    this.pause();
    for (const s of this.subs) s.dispose();
  }
}
