/// <reference lib="dom" />
/**
 * One card: a tag's chart, one smoothed line per run with its raw line faded behind. Set up for streaming
 * (Chart.js performance guide): no animation, no parsing, LTTB decimation, no points, `update('none')`.
 */
import { Chart, Decimation, Legend, LinearScale, LineController, LineElement, LogarithmicScale, PointElement, Tooltip, type ChartDataset } from 'chart.js';
import { smooth } from './smoothing';
import { withAlpha, type Theme } from './theme';

Chart.register(LineController, LineElement, PointElement, LinearScale, LogarithmicScale, Tooltip, Legend, Decimation);

export interface SeriesData {
  /** A compare panel's run key (see compare-view.ts); `run` is then the role. */
  source?: string;
  run: string;
  steps: number[];
  times: number[];
  values: (number | null)[];
  /** Set by a compare panel: the theme colour, dash pattern and legend label of the series' run. */
  colourIndex?: number;
  dash?: number[];
  label?: string;
}

export interface ViewSettings {
  smoothing: number;
  xAxis: 'step' | 'relative';
  logY: boolean;
}

type Point = { x: number; y: number | null };
type LineDataset = ChartDataset<'line', Point[]> & { run?: string; source?: string; raw?: boolean };

export function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return '';
  const a = Math.abs(s);
  if (a < 60) return `${Number(s.toFixed(a < 10 ? 1 : 0))}s`;
  if (a < 3600) return `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

export class ChartCard {
  readonly element: HTMLElement;
  readonly chart: Chart<'line', Point[]>;
  private readonly drivers: HTMLElement;

  constructor(
    readonly tag: string,
    theme: Theme,
    settings: ViewSettings,
  ) {
    this.element = document.createElement('article');
    this.element.className = 'card';
    this.element.dataset.tag = tag;
    const title = document.createElement('h3');
    title.textContent = tag;
    title.title = tag;
    const box = document.createElement('div');
    box.className = 'chart-box';
    const canvas = document.createElement('canvas');
    canvas.setAttribute('role', 'img');
    canvas.setAttribute('aria-label', `${tag} by step`);
    box.append(canvas);
    this.drivers = document.createElement('p');
    this.drivers.className = 'drivers';
    this.drivers.hidden = true;
    this.element.append(title, this.drivers, box);
    this.chart = new Chart(canvas, {
      type: 'line',
      data: { datasets: [] },
      options: {
        animation: false,
        parsing: false,
        normalized: true,
        responsive: true,
        maintainAspectRatio: false,
        spanGaps: true,
        interaction: { mode: 'nearest', axis: 'x', intersect: false },
        elements: { point: { radius: 0, hitRadius: 4 }, line: { borderWidth: 1.5, tension: 0 } },
        plugins: {
          decimation: { enabled: true, algorithm: 'lttb' },
          legend: { display: false, labels: { boxWidth: 12, boxHeight: 2, filter: (item) => !String(item.text).endsWith('(raw)') } },
          tooltip: { enabled: true },
        },
        scales: {
          x: { type: 'linear', ticks: { minRotation: 0, maxRotation: 0, maxTicksLimit: 6 } },
          y: { type: settings.logY ? 'logarithmic' : 'linear', ticks: { maxTicksLimit: 6 } },
        },
      },
    });
    this.applyTheme(theme, false);
    this.applyAxis(settings);
  }

  /** Redraws the card from its series (all of them: smoothing depends on every earlier point). */
  setData(series: readonly SeriesData[], theme: Theme, settings: ViewSettings): void {
    const datasets: LineDataset[] = [];
    series.forEach((s, i) => {
      const xs = settings.xAxis === 'step' ? s.steps : s.times;
      const colour = theme.series[(s.colourIndex ?? i) % theme.series.length];
      const label = s.label ?? s.run;
      const borderDash = s.dash ?? [];
      const smoothed = smooth(s.values, settings.smoothing);
      const raw: Point[] = new Array(xs.length);
      const sm: Point[] = new Array(xs.length);
      for (let j = 0; j < xs.length; j++) {
        raw[j] = { x: xs[j], y: s.values[j] };
        sm[j] = { x: xs[j], y: smoothed[j] };
      }
      datasets.push({ label: `${label} (raw)`, run: s.run, source: s.source, raw: true, data: raw, borderDash, borderColor: withAlpha(colour, 0.3), backgroundColor: withAlpha(colour, 0.3), borderWidth: 1, order: 1 });
      // A lone point draws no line: show it as a dot.
      const lone = s.values.filter((v) => v !== null).length === 1;
      datasets.push({ label, run: s.run, source: s.source, raw: false, data: sm, borderDash, borderColor: colour, backgroundColor: colour, borderWidth: 1.5, pointRadius: lone ? 3 : 0, order: 0 });
    });
    this.chart.data.datasets = datasets;
    this.chart.options.plugins!.legend!.display = series.length > 1;
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

  // chart.options is a resolver proxy: set its properties one by one (spreading it trips over Chart.js' internals).
  applyAxis(settings: ViewSettings): void {
    const scales = this.chart.options.scales!;
    scales.y!.type = settings.logY ? 'logarithmic' : 'linear';
    const x = scales.x!;
    x.title!.display = true;
    x.title!.text = settings.xAxis === 'step' ? 'step' : 'relative time';
    x.ticks!.callback = settings.xAxis === 'step' ? (v) => String(v) : (v) => formatSeconds(Number(v));
    (x.ticks as { precision?: number }).precision = settings.xAxis === 'step' ? 0 : undefined;
  }

  applyTheme(theme: Theme, redraw = true): void {
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
