/// <reference lib="dom" />
/**
 * The dashboard webview: holds the run's series, draws one card per tag grouped by prefix, and redraws the cards
 * that changed through the draw queue (draw-queue.ts: a few cards a frame, within a time budget, those in view
 * first), however many messages arrive. Talks to the extension only through client/dashboard/messages.ts.
 */
import {
  parseHostMessage,
  parsePanelState,
  type CheckpointMark,
  type DashboardRun,
  type HostMessage,
  type MetricPoint,
  type PanelState,
  type Series,
} from '../../client/dashboard/messages';
import { parseXAxis } from './charts/axes';
import { ChartCard, type SeriesData, type ViewContext, type ViewSettings } from './charts/chart-card';
import { compareGroups, compareTags, PINNED_GROUP, tagMatcher } from './cards/groups';
import { CompareView } from './compare/compare-view';
import { compareHeading } from './compare/run-names';
import { ConfigView } from './config-tab/config-view';
import { cardButton, type VscodeCheckbox, type VscodeSingleSelect, type VscodeTextfield } from './controls/elements';
import { DrawQueue, type FrameReport } from './cards/draw-queue';
import { csvExport, pngExport } from './export/export';
import { Layout, parseLayout, type LayoutState } from './cards/layout';
import { checkpointMarks, MODEL_VERSION_TAG, syncMarks, trainerTimes, type TimelineMark } from './charts/marks';
import { RolloutsView } from './rollouts/rollouts-view';
import { Tabs } from './controls/tabs';
import { onThemeChange, readTheme } from './theme';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

interface SavedState extends Partial<PanelState> {
  settings?: Partial<ViewSettings>;
  filter?: string;
  runFilter?: string;
  tab?: string;
  layout?: LayoutState;
}

const vscode = acquireVsCodeApi();
const saved = (vscode.getState() ?? {}) as SavedState;
const settings: ViewSettings = {
  smoothing: clampSmoothing(saved.settings?.smoothing ?? 0.6),
  xAxis: parseXAxis(saved.settings?.xAxis),
  logY: saved.settings?.logY === true,
  ignoreOutliers: saved.settings?.ignoreOutliers === true,
};
const context: ViewContext = {};
let checkpoints: CheckpointMark[] = [];
/** The marks need working out again (new checkpoints, model versions, or trainer times for checkpoints). */
let marksStale = false;
let panel: PanelState | undefined = parsePanelState(saved);
let filter = typeof saved.filter === 'string' ? saved.filter : '';
let theme = readTheme();
const layout = new Layout(parseLayout(saved.layout));

/** tag -> run -> points. */
const data = new Map<string, Map<string, SeriesData>>();
const cards = new Map<string, ChartCard>();
/** tag -> the config keys that drive it (from the host's `drivers` messages). */
const drivers = new Map<string, string[]>();
const reveal = (key: string) => vscode.postMessage({ type: 'revealKey', key });
/** Tags whose data changed since their card was last drawn (a queued card not here only redraws its marks). */
const dirty = new Set<string>();
/** Tags that received points since the last frame (what the marks may depend on). */
const arrived = new Set<string>();
/** How much of each card is in view (0 to 1): the draw queue draws those in view first. */
const inView = new Map<string, number>();
const viewWatch = new IntersectionObserver(
  (entries) => {
    for (const e of entries) {
      const tag = (e.target as HTMLElement).dataset.tag;
      if (tag !== undefined) inView.set(tag, e.isIntersecting ? e.intersectionRatio : 0);
    }
  },
  { threshold: [0, 0.25, 0.5, 0.75, 1] },
);
/** A card was made this frame: the filter and the empty notice are applied again after it. */
let cardsAdded = false;
const queue = new DrawQueue<string>(drawCard, {
  visibility: (tag) => inView.get(tag) ?? 0,
  beforeFrame: () => {
    if (updateMarks()) for (const tag of cards.keys()) queue.add(tag);
    arrived.clear();
  },
  afterFrame: frameDrawn,
});

/** The Chart.js instance of every card, by tag (the webview tests read what is drawn from here). */
const charts = new Map<string, ChartCard['chart']>();
(window as unknown as { __charts: typeof charts }).__charts = charts;
/** Cards still to draw (a frame draws within its budget, the rest in the next ones): tests wait for 0. */
(window as unknown as { __drawPending: () => number }).__drawPending = () => queue.size;
/**
 * Each frame's draws are pushed here when it is an array (the tests set it to read what the queue did); the tests
 * also read its budget.
 */
const hooks = window as unknown as { __drawFrames?: unknown; __drawBudgetMs: number };
hooks.__drawBudgetMs = queue.budgetMs;

function clampSmoothing(x: unknown): number {
  return typeof x === 'number' && Number.isFinite(x) ? Math.min(0.99, Math.max(0, x)) : 0.6;
}

function save(): void {
  vscode.setState({
    ...panel,
    settings,
    filter,
    runFilter: compare.filterText,
    tab: tabs.current,
    layout: layout.state,
  } satisfies SavedState);
}

/** A series of a card: a role's, or in a compare panel a compared run's role's (`source`). */
function seriesOf(tag: string, run: string, source?: string): SeriesData {
  let runs = data.get(tag);
  if (!runs) data.set(tag, (runs = new Map()));
  const key = source === undefined ? run : `${source}\u0000${run}`;
  let s = runs.get(key);
  if (!s) runs.set(key, (s = { ...(source === undefined ? {} : { source }), run, steps: [], times: [], values: [] }));
  return s;
}

function load(series: readonly Series[]): void {
  for (const c of cards.values()) {
    viewWatch.unobserve(c.element);
    c.destroy();
  }
  cards.clear();
  charts.clear();
  data.clear();
  dirty.clear();
  inView.clear();
  queue.clear();
  document.getElementById('groups')!.replaceChildren();
  for (const s of series) {
    const d = seriesOf(s.tag, s.run, s.source);
    d.steps.push(...s.steps);
    d.times.push(...s.times);
    d.values.push(...s.values);
    changed(s.tag);
  }
  // The empty notice and the marks are worked out in a frame even when there are no series.
  queue.schedule();
}

function append(points: readonly MetricPoint[]): void {
  for (const p of points) {
    const d = seriesOf(p.tag, p.run, p.source);
    d.steps.push(p.step);
    d.times.push(p.time);
    d.values.push(p.value);
    changed(p.tag);
  }
}

/** A tag's data changed: its card is drawn again in a coming frame. */
function changed(tag: string): void {
  dirty.add(tag);
  arrived.add(tag);
  queue.add(tag);
}

function groupElement(group: string): HTMLElement {
  const root = document.getElementById('groups')!;
  let el = root.querySelector<HTMLElement>(`section[data-group="${CSS.escape(group)}"]`);
  if (el) return el;
  el = document.createElement('section');
  el.className = 'group';
  el.dataset.group = group;
  const h = document.createElement('h2');
  const toggle = document.createElement('button');
  toggle.className = 'group-toggle';
  toggle.textContent = group === PINNED_GROUP ? 'Pinned' : `${group}/`;
  h.append(toggle);
  const grid = document.createElement('div');
  grid.className = 'cards';
  el.append(h, grid);
  const section = el;
  const showCollapsed = () => {
    const collapsed = layout.isCollapsed(group);
    section.classList.toggle('collapsed', collapsed);
    toggle.setAttribute('aria-expanded', String(!collapsed));
    grid.hidden = collapsed;
  };
  toggle.addEventListener('click', () => {
    layout.toggleCollapsed(group);
    showCollapsed();
    save();
  });
  showCollapsed();
  const after = [...root.children].find((g) => compareGroups(group, (g as HTMLElement).dataset.group!) < 0);
  root.insertBefore(el, after ?? null);
  return el;
}

/** Puts a card into its group (pinned or its prefix's), in tag order. */
function place(tag: string, card: ChartCard): void {
  const grid = groupElement(layout.groupFor(tag)).querySelector('.cards')!;
  const after = [...grid.children].find(
    (c) => c !== card.element && compareTags(tag, (c as HTMLElement).dataset.tag!) < 0,
  );
  grid.insertBefore(card.element, after ?? null);
}

function cardFor(tag: string): ChartCard {
  let card = cards.get(tag);
  if (card) return card;
  const made = new ChartCard(tag, theme, settings);
  card = made;
  cards.set(tag, card);
  const keys = drivers.get(tag);
  if (keys) card.setDrivers(keys, reveal);
  charts.set(tag, card.chart);
  const pin = cardButton('Pin', 'pin', '', () => {
    layout.togglePin(tag);
    showPin();
    place(tag, made);
    applyFilter();
    save();
  });
  const showPin = () => {
    const on = layout.isPinned(tag);
    pin.setAttribute('aria-pressed', String(on));
    pin.textContent = on ? 'Unpin' : 'Pin';
    pin.title = on ? 'Unpin this card' : 'Pin this card to the top';
  };
  showPin();
  const csv = cardButton('CSV', 'csv', 'Export this card’s series as CSV', () =>
    vscode.postMessage(csvExport(tag, [...(data.get(tag)?.values() ?? [])], context.startedAt)),
  );
  const png = cardButton('PNG', 'png', 'Export this chart as a PNG image', () =>
    vscode.postMessage(pngExport(tag, made.chart.canvas, getComputedStyle(made.element).backgroundColor)),
  );
  card.actions.append(pin, csv, png);
  place(tag, card);
  viewWatch.observe(card.element);
  cardsAdded = true;
  return card;
}

/** Each trainer run's series with the most points (one per stage): the ones checkpoint steps are timed by. */
function trainerSeries(): SeriesData[] {
  const best = new Map<string, SeriesData>();
  for (const runs of data.values())
    for (const s of runs.values())
      if ((s.run === 'trainer' || s.run.endsWith('/trainer')) && s.steps.length > (best.get(s.run)?.steps.length ?? 0))
        best.set(s.run, s);
  return [...best.values()];
}

/** Works the marks out again when something they depend on changed; true when they changed. */
function updateMarks(): boolean {
  const checkpointsUntimed = () => (context.marks ?? []).some((m) => m.kind === 'checkpoint' && m.time === undefined);
  if (!marksStale && ![...arrived].some((t) => MODEL_VERSION_TAG.test(t)) && !(checkpointsUntimed() && arrived.size))
    return false;
  marksStale = false;
  const versions = [...data].filter(([tag]) => MODEL_VERSION_TAG.test(tag)).flatMap(([, runs]) => [...runs.values()]);
  const marks: TimelineMark[] = [
    ...syncMarks(versions),
    ...checkpointMarks(checkpoints, trainerTimes(trainerSeries())),
  ];
  const same = JSON.stringify(marks) === JSON.stringify(context.marks ?? []);
  context.marks = marks;
  return !same;
}

/** The draw queue's work for one card: its data as it is now, or only the marks when its data did not change. */
function drawCard(tag: string): void {
  const runs = data.get(tag);
  if (!runs) return;
  if (dirty.delete(tag) || !cards.has(tag))
    cardFor(tag).setData(compare.decorate([...runs.values()], theme.series.length), theme, settings, context);
  else cards.get(tag)!.redrawMarks(context);
}

function frameDrawn(report: FrameReport<string>): void {
  if (cardsAdded) applyFilter();
  cardsAdded = false;
  document.getElementById('empty')!.hidden = cards.size > 0;
  if (Array.isArray(hooks.__drawFrames)) hooks.__drawFrames.push(report);
}

function redrawAll(): void {
  for (const tag of cards.keys()) {
    dirty.add(tag);
    queue.add(tag);
  }
}

function applyFilter(): void {
  const match = tagMatcher(filter);
  for (const [tag, card] of cards) card.element.hidden = !match(tag);
  for (const g of document.querySelectorAll<HTMLElement>('section.group'))
    g.hidden = !g.querySelector('.card:not([hidden])');
}

/** The runs the Config tab shows: the compared runs the run filter lets through, or the panel's one run. */
function renderConfig(): void {
  const runs = compare.active
    ? compare.named.filter((r) => compare.shows(r.key))
    : panel
      ? [{ key: panel.key, title: document.getElementById('run-title')!.textContent ?? '' }]
      : [];
  configView.render(runs, compare.active);
}

function onMessage(m: HostMessage): void {
  switch (m.type) {
    case 'init':
      panel = m.compare
        ? {
            key: m.compare[0].key,
            jobDir: m.compare[0].jobDir,
            compare: m.compare.map((r) => ({ key: r.key, jobDir: r.jobDir })),
          }
        : { key: m.run.key, jobDir: m.run.jobDir };
      compareRuns = m.compare ?? [];
      compare.setRuns(compareRuns, theme);
      // A compare panel has no Rollouts tab: each run's own dashboard has its samples.
      tabs.setAvailable('rollouts', compareRuns.length === 0);
      context.startedAt = m.run.startedAt;
      checkpoints = [];
      marksStale = true;
      {
        // A compare panel's header names its runs itself: the host's title may only count them.
        const heading = compare.active ? compareHeading(compare.named.map((r) => r.title)) : m.run;
        const title = document.getElementById('run-title')!;
        title.textContent = heading.title;
        title.title = heading.title;
        document.getElementById('run-status')!.textContent = heading.status;
        document.title = heading.title;
      }
      renderConfig();
      save();
      drivers.clear();
      // Everything of the run shown before goes: its series, and its rollouts with the step picked among them.
      rolloutsView.reset();
      load(m.series);
      break;
    case 'append':
      append(m.points);
      break;
    case 'rollouts':
      rolloutsView.add(m.step, m.samples, m.origin, m.eval);
      break;
    case 'config':
      configView.set(m.runs);
      renderConfig();
      break;
    case 'drivers':
      for (const [tag, keys] of Object.entries(m.drivers)) {
        drivers.set(tag, keys);
        cards.get(tag)?.setDrivers(keys, reveal);
      }
      break;
    case 'checkpoints':
      checkpoints = m.checkpoints;
      marksStale = true;
      queue.schedule();
      break;
    case 'status':
      document.getElementById('run-status')!.textContent = m.detail ? `${m.status} · ${m.detail}` : m.status;
      break;
  }
}

function wireControls(): void {
  const slider = document.getElementById('smoothing') as HTMLInputElement;
  const shown = document.getElementById('smoothing-value') as HTMLOutputElement;
  const xAxis = document.getElementById('x-axis') as VscodeSingleSelect;
  const logY = document.getElementById('log-y') as VscodeCheckbox;
  const ignoreOutliers = document.getElementById('ignore-outliers') as VscodeCheckbox;
  const filterBox = document.getElementById('filter') as VscodeTextfield;
  filterBox.label = 'Filter tags (regex)';
  slider.value = String(settings.smoothing);
  shown.value = settings.smoothing.toFixed(2);
  xAxis.value = settings.xAxis;
  logY.checked = settings.logY;
  ignoreOutliers.checked = settings.ignoreOutliers;
  filterBox.value = filter;
  slider.addEventListener('input', () => {
    settings.smoothing = clampSmoothing(Number(slider.value));
    shown.value = settings.smoothing.toFixed(2);
    save();
    redrawAll();
  });
  const axisChanged = () => {
    settings.xAxis = parseXAxis(xAxis.value);
    settings.logY = logY.checked;
    settings.ignoreOutliers = ignoreOutliers.checked;
    save();
    for (const c of cards.values()) c.applyAxis(settings);
    redrawAll();
  };
  xAxis.addEventListener('change', axisChanged);
  logY.addEventListener('change', axisChanged);
  ignoreOutliers.addEventListener('change', axisChanged);
  filterBox.addEventListener('input', () => {
    filter = filterBox.value;
    save();
    applyFilter();
  });
  if (typeof saved.tab === 'string') tabs.show(saved.tab);
}

let compareRuns: readonly DashboardRun[] = [];
const compare = new CompareView(() => {
  save();
  redrawAll();
  renderConfig();
});
const configView = new ConfigView();
const tabs = new Tabs(() => save());
const rolloutsView = new RolloutsView(theme);
(window as unknown as { __rollouts: RolloutsView }).__rollouts = rolloutsView;
wireControls();
if (typeof saved.runFilter === 'string') compare.setFilter(saved.runFilter);
onThemeChange(() => {
  theme = readTheme();
  compare.renderLegend(theme);
  rolloutsView.setTheme(theme);
  for (const c of cards.values()) c.applyTheme(theme, false);
  redrawAll();
});
window.addEventListener('message', (ev: MessageEvent) => {
  const m = parseHostMessage(ev.data);
  if (m) onMessage(m);
});
vscode.postMessage({ type: 'ready' });
