/// <reference lib="dom" />
/**
 * One card: a tag's chart, one smoothed line per run with its raw line faded behind. Set up for streaming
 * (Chart.js performance guide): no animation, no parsing, no points, `update('none')`, and long series decimated
 * incrementally by our own LTTB (decimation.ts) rather than Chart.js' (which decimates the whole series again on
 * every update).
 */
import {
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  LogarithmicScale,
  PointElement,
  Tooltip,
  type ChartDataset,
} from 'chart.js';
import { formatX, outlierExtent, xValues, X_AXIS_TITLES, type XAxis } from './axes';
import { withAlpha, type Theme } from '../theme';
import { formatValue, indexAtOrBefore, type RunDataset } from './tooltip';
import { DragZoom, selectionPlugin, type XRange } from './zoom';
import { markX, marksOfCard, type TimelineMark } from './marks';
import { marksPlugin, type MarkStyle, type PlacedMark } from './marks-plugin';
import { decimationPlugin, type DecimatedDataset } from './decimation';

Chart.register(LineController, LineElement, PointElement, LinearScale, LogarithmicScale, Tooltip, Legend);

export interface SeriesData {
  run: string;
  steps: number[];
  times: number[];
  values: (number | null)[];
  /** A compare panel's run key (see compare-view.ts); `run` is then the role. */
  source?: string;
  /** Set by a compare panel: the theme colour, dash pattern and legend label of the series' run. */
  colourIndex?: number;
  dash?: number[];
  label?: string;
}

export interface ViewSettings {
  smoothing: number;
  xAxis: XAxis;
  logY: boolean;
  /** y extent = 5th–95th percentile of the values in view (TensorBoard's "Ignore outliers in chart scaling"). */
  ignoreOutliers: boolean;
}

/** What the cards share beyond the settings: the run's start (seconds since the epoch) for wall time. */
export interface ViewContext {
  startedAt?: number;
  /** Weight syncs and checkpoints, drawn on every card. */
  marks?: readonly TimelineMark[];
}

type Point = { x: number; y: number | null };

/** A run's line as last drawn, and the EMA's state, so that streamed points extend it. */
interface RunCache {
  smoothing: number;
  xAxis: XAxis;
  startedAt: number | undefined;
  xs: number[];
  smoothed: (number | null)[];
  rawPts: Point[];
  smPts: Point[];
  last: number;
  count: number;
  finite: number;
  /** Every value so far equals the first: drawn unsmoothed (smooth()'s rule). */
  constant: boolean;
}
type LineDataset = ChartDataset<'line', Point[]> & RunDataset & DecimatedDataset & { source?: string };

/** A run's line as drawn, undecimated: the tooltip and the exports read from here. */
export interface Column {
  run: string;
  xs: number[];
  raw: (number | null)[];
  smoothed: (number | null)[];
}

export class ChartCard {
  readonly element: HTMLElement;
  readonly chart: Chart<'line', Point[]>;
  /** The card's buttons (pin, export, reset zoom), after its title. */
  readonly actions: HTMLElement;
  /** The runs' lines, in dataset order. */
  columns: Column[] = [];
  private settings: ViewSettings;
  private context: ViewContext = {};
  /** The runs of the series drawn (which stages' marks belong on this card). */
  private runs: readonly { run: string }[] = [];
  private hoverX: number | undefined;
  private theme: Theme;
  private xAxisShown: XAxis | undefined;
  private readonly cache = new Map<string, RunCache>();
  /** Each run's raw and smoothed datasets, by cacheKey(). */
  private readonly datasets = new Map<string, [LineDataset, LineDataset]>();
  readonly zoom: DragZoom;
  private readonly drivers: HTMLElement;

  constructor(
    readonly tag: string,
    theme: Theme,
    settings: ViewSettings,
  ) {
    this.settings = settings;
    this.theme = theme;
    this.element = document.createElement('article');
    this.element.className = 'card';
    this.element.dataset.tag = tag;
    const title = document.createElement('h3');
    title.textContent = tag;
    title.title = tag;
    const head = document.createElement('header');
    head.className = 'card-head';
    this.actions = document.createElement('span');
    this.actions.className = 'card-actions';
    head.append(title, this.actions);
    const box = document.createElement('div');
    box.className = 'chart-box';
    const canvas = document.createElement('canvas');
    canvas.setAttribute('role', 'img');
    canvas.setAttribute('aria-label', `${tag} by step`);
    box.append(canvas);
    this.drivers = document.createElement('p');
    this.drivers.className = 'drivers';
    this.drivers.hidden = true;
    this.element.append(head, this.drivers, box);
    this.chart = new Chart(canvas, {
      type: 'line',
      data: { datasets: [] },
      plugins: [
        decimationPlugin,
        selectionPlugin(() => withAlpha(this.theme.foreground, 0.12)),
        marksPlugin(() => this.placedMarks()),
      ],
      options: {
        animation: false,
        parsing: false,
        normalized: true,
        responsive: true,
        maintainAspectRatio: false,
        spanGaps: true,
        interaction: { mode: 'runsAtX', intersect: false },
        elements: { point: { radius: 0, hitRadius: 4 }, line: { borderWidth: 1.5, tension: 0 } },
        plugins: {
          legend: {
            display: false,
            labels: { boxWidth: 12, boxHeight: 2, filter: (item) => !String(item.text).endsWith('(raw)') },
          },
          tooltip: {
            enabled: true,
            filter: (item) => (item.dataset as RunDataset).raw === false,
            callbacks: {
              // Called before the labels: the title's x is the one each label compares its run's x with.
              title: (items) => {
                this.hoverX = items[0]?.parsed.x ?? undefined;
                return this.hoverX === undefined
                  ? ''
                  : `${X_AXIS_TITLES[this.settings.xAxis]} ${formatX(this.settings.xAxis, this.hoverX, this.context.startedAt)}`;
              },
              label: (item) => this.tooltipLabel(item.datasetIndex, item.parsed.x ?? Number.NaN, this.hoverX),
            },
          },
        },
        scales: {
          x: { type: 'linear', ticks: { minRotation: 0, maxRotation: 0, maxTicksLimit: 6 } },
          y: { type: settings.logY ? 'logarithmic' : 'linear', ticks: { maxTicksLimit: 6 } },
        },
      },
    });
    this.applyTheme(theme, false);
    this.applyAxis(settings);
    this.zoom = new DragZoom(this.chart as unknown as Chart, (range) => this.setXRange(range));
    this.actions.append(this.zoom.resetButton);
  }

  private placedMarks(): { marks: PlacedMark[]; style: MarkStyle } {
    const marks: PlacedMark[] = [];
    for (const m of marksOfCard(this.context.marks ?? [], this.runs)) {
      const x = markX(m, this.settings.xAxis, this.context.startedAt);
      if (x !== undefined) marks.push({ kind: m.kind, x, label: m.label });
    }
    const t = this.theme;
    return {
      marks,
      style: {
        checkpoint: withAlpha(t.muted, 0.8),
        checkpointText: t.muted,
        sync: t.series[3] ?? t.foreground,
        background: t.cardBackground,
        fontSize: 10,
        fontFamily: t.fontFamily,
      },
    };
  }

  /** Redraws the marks alone (the data did not change). */
  redrawMarks(context: ViewContext): void {
    this.context = context;
    this.chart.draw();
  }

  /** Shows only `range` of x (undefined: all of it); the outlier extent follows what is in view. */
  private setXRange(range: XRange | undefined): void {
    const x = this.chart.options.scales!.x!;
    x.min = range?.min;
    x.max = range?.max;
    this.applyYExtent();
    this.chart.update('none');
  }

  /** Redraws the card from its series (all of them: smoothing depends on every earlier point). */
  setData(
    series: readonly SeriesData[],
    theme: Theme,
    settings: ViewSettings,
    context: ViewContext = this.context,
  ): void {
    this.settings = settings;
    this.context = context;
    this.runs = series.map((s) => ({ run: s.run }));
    const datasets: LineDataset[] = [];
    const columns: Column[] = [];
    const seen = new Set<string>();
    series.forEach((s, i) => {
      const key = cacheKey(s);
      seen.add(key);
      const c = this.runCache(s, settings, context);
      const colour = theme.series[(s.colourIndex ?? i) % theme.series.length];
      const label = s.label ?? s.run;
      const borderDash = s.dash ?? [];
      let pair = this.datasets.get(key);
      if (!pair) this.datasets.set(key, (pair = [{ data: [] } as LineDataset, { data: [] } as LineDataset]));
      const [raw, smoothed] = pair;
      // The same dataset objects every time, so Chart.js keeps their controllers and elements; their points are the
      // run's cached ones, which streaming extends in place, and decimation.ts sets what is drawn of them.
      raw.label = `${label} (raw)`;
      raw.run = s.run;
      raw.source = s.source;
      raw.raw = true;
      raw.allPoints = c.rawPts;
      raw.borderDash = borderDash;
      raw.borderColor = withAlpha(colour, 0.3);
      raw.backgroundColor = withAlpha(colour, 0.3);
      raw.borderWidth = 1;
      raw.order = 1;
      columns.push({ run: label, xs: c.xs, raw: s.values, smoothed: c.smoothed });
      smoothed.label = label;
      smoothed.run = s.run;
      smoothed.source = s.source;
      smoothed.raw = false;
      smoothed.allPoints = c.smPts;
      smoothed.borderDash = borderDash;
      smoothed.borderColor = colour;
      smoothed.backgroundColor = colour;
      smoothed.borderWidth = 1.5;
      // A lone point draws no line: show it as a dot.
      smoothed.pointRadius = c.finite === 1 ? 3 : 0;
      smoothed.order = 0;
      datasets.push(raw, smoothed);
    });
    for (const run of this.cache.keys()) if (!seen.has(run)) this.cache.delete(run);
    for (const run of this.datasets.keys()) if (!seen.has(run)) this.datasets.delete(run);
    const shown = this.chart.data.datasets;
    if (shown.length !== datasets.length || datasets.some((d, j) => shown[j] !== d))
      this.chart.data.datasets = datasets;
    this.columns = columns;
    this.chart.options.plugins!.legend!.display = series.length > 1;
    this.applyYExtent();
    this.chart.update('none');
  }

  /** The config keys that drive this tag, as buttons under the title; a click reveals the key (`onReveal`). */
  setDrivers(keys: readonly string[], onReveal: (key: string) => void): void {
    const buttons = keys.map((k) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'driver';
      b.textContent = k;
      b.title = `Show ${k} in the config`;
      b.addEventListener('click', () => onReveal(k));
      return b;
    });
    this.drivers.replaceChildren(...buttons);
    this.drivers.hidden = keys.length === 0;
  }

  /**
   * A run's drawn points, extended by the points that arrived since the last redraw (streaming adds at the end);
   * built again when the settings changed, the series shrank, or a constant series stopped being constant (its
   * smoothing, unsmoothed until then, is the EMA from the start). Gives exactly what `smooth()` gives.
   */
  private runCache(s: SeriesData, settings: ViewSettings, context: ViewContext): RunCache {
    let c = this.cache.get(cacheKey(s));
    const n = s.values.length;
    const valid =
      c &&
      c.smoothing === settings.smoothing &&
      c.xAxis === settings.xAxis &&
      c.startedAt === context.startedAt &&
      c.xs.length <= n;
    if (!c || !valid) {
      c = {
        smoothing: settings.smoothing,
        xAxis: settings.xAxis,
        startedAt: context.startedAt,
        xs: [],
        smoothed: [],
        rawPts: [],
        smPts: [],
        last: 0,
        count: 0,
        finite: 0,
        constant: true,
      };
      this.cache.set(cacheKey(s), c);
    }
    const from = c.xs.length;
    if (from === n) return c;
    const first = n ? s.values[0] : null;
    let constant = c.constant;
    for (let j = from; j < n && constant; j++) if (s.values[j] !== first) constant = false;
    if (c.constant && !constant && from > 0) {
      // Smoothed from the start now.
      this.cache.delete(cacheKey(s));
      return this.runCache(s, settings, context);
    }
    c.constant = constant;
    const xs = xValues(settings.xAxis, s.steps.slice(from), s.times.slice(from), context.startedAt);
    const w = Math.min(1, Math.max(0, settings.smoothing));
    for (let k = 0; k < xs.length; k++) {
      const j = from + k;
      const y = s.values[j];
      let out: number | null;
      if (y === null || !Number.isFinite(y)) out = y;
      else {
        c.finite++;
        if (constant) out = y;
        else {
          c.last = c.last * w + (1 - w) * y;
          c.count++;
          out = c.last / (w === 1 ? 1 : 1 - Math.pow(w, c.count));
        }
      }
      c.xs.push(xs[k]);
      c.smoothed.push(out);
      c.rawPts.push({ x: xs[k], y });
      c.smPts.push({ x: xs[k], y: out });
    }
    return c;
  }

  /** The y bounds: the outlier extent when asked for, else the scale's own. */
  private applyYExtent(): void {
    const y = this.chart.options.scales!.y!;
    const x = this.chart.options.scales!.x!;
    const extent = this.settings.ignoreOutliers
      ? outlierExtent(
          this.columns.map((c) => ({ xs: c.xs, ys: c.raw })),
          x.min as number | undefined,
          x.max as number | undefined,
          this.settings.logY,
        )
      : undefined;
    y.min = extent?.min;
    y.max = extent?.max;
  }

  /** `run: smoothed (raw r)`, and the run's own x when it is not the hovered one. */
  private tooltipLabel(datasetIndex: number, x: number, titleX: number | undefined): string {
    const c = this.columns[datasetIndex >> 1];
    if (!c) return '';
    const j = indexAtOrBefore(c.xs, x);
    const at =
      titleX !== undefined && x !== titleX ? ` @ ${formatX(this.settings.xAxis, x, this.context.startedAt)}` : '';
    return `${c.run}${at}: ${formatValue(c.smoothed[j])} (raw ${formatValue(c.raw[j])})`;
  }

  // chart.options is a resolver proxy: set its properties one by one (spreading it trips over Chart.js' internals).
  applyAxis(settings: ViewSettings): void {
    // A zoom is a range of the old axis' units.
    if (this.xAxisShown !== undefined && settings.xAxis !== this.xAxisShown) this.zoom.set(undefined);
    this.xAxisShown = settings.xAxis;
    this.settings = settings;
    const scales = this.chart.options.scales!;
    scales.y!.type = settings.logY ? 'logarithmic' : 'linear';
    const x = scales.x!;
    x.title!.display = true;
    x.title!.text = X_AXIS_TITLES[settings.xAxis];
    x.ticks!.callback = (v, _i, ticks) => {
      const spacing = ticks.length > 1 ? Math.abs(ticks[1].value - ticks[0].value) : undefined;
      return formatX(this.settings.xAxis, Number(v), this.context.startedAt, spacing);
    };
    (x.ticks as { precision?: number }).precision = settings.xAxis === 'step' ? 0 : undefined;
  }

  applyTheme(theme: Theme, redraw = true): void {
    this.theme = theme;
    const o = this.chart.options;
    const font = { family: theme.fontFamily, size: 11 };
    for (const axis of [o.scales!.x!, o.scales!.y!]) {
      axis.grid!.color = theme.grid;
      axis.border!.color = theme.border;
      axis.ticks!.color = theme.muted;
      axis.ticks!.font = font;
      if ('title' in axis) {
        axis.title!.color = theme.muted;
        axis.title!.font = font;
      }
    }
    const legend = o.plugins!.legend!;
    legend.labels!.color = theme.foreground;
    legend.labels!.font = font;
    const tip = o.plugins!.tooltip!;
    tip.backgroundColor = theme.tooltipBackground;
    tip.borderColor = theme.tooltipBorder;
    tip.borderWidth = theme.tooltipBorder ? 1 : 0;
    tip.titleColor = theme.foreground;
    tip.bodyColor = theme.foreground;
    tip.titleFont = font;
    tip.bodyFont = font;
    if (redraw) this.chart.update('none');
  }

  destroy(): void {
    this.chart.destroy();
    this.element.remove();
  }
}

/** A series' cache slot: its run (role), and in a compare panel the run it belongs to. */
function cacheKey(s: SeriesData): string {
  return s.source === undefined ? s.run : `${s.source}\u0000${s.run}`;
}
