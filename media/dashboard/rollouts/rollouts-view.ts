/// <reference lib="dom" />
/**
 * The Rollouts tab: samples per step, a step selector (the latest by default, following new steps until another is
 * picked), a search box (case-insensitive substring over prompt and response, or over every turn of an agent's
 * episodes, its placeholder saying which) and a reward histogram of the samples shown. Model output is only ever `textContent`, never parsed as HTML.
 */
import { BarController, BarElement, CategoryScale, Chart, LinearScale, Tooltip } from 'chart.js';
import type { RolloutSampleMessage } from '../../../client/dashboard/messages';
import type { VscodeSingleSelect, VscodeTextfield } from '../controls/elements';
import { rewardHistogram } from './histogram';
import { TranscriptView } from './transcript-view';
import type { Theme } from '../theme';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip);

/** Steps kept in the page (older ones are dropped as new ones arrive). */
const MAX_STEPS = 200;

const fmt = (x: number) => String(Number(x.toPrecision(3)));

/** What the search box matches, as its placeholder says: single-turn samples, or the turns of agent episodes. */
const SEARCH_SAMPLES = 'Search prompts and responses';
const SEARCH_TURNS = "Search the episodes' turns";

export class RolloutsView {
  private readonly steps = new Map<number, RolloutSampleMessage[]>();
  /** The step picked in the selector; undefined: follow the latest. */
  private picked: number | undefined;
  private query = '';
  private histogram: Chart<'bar', number[], string> | undefined;
  /** Multi-turn episodes: groups and transcripts in place of the sample table. */
  readonly transcripts = new TranscriptView();

  constructor(private theme: Theme) {
    const search = document.getElementById('rollouts-search') as VscodeTextfield;
    search.label = SEARCH_SAMPLES;
    search.addEventListener('input', () => {
      this.query = search.value;
      this.render();
    });
    const select = this.select();
    select.addEventListener('change', () => {
      const latest = this.latest();
      const v = Number(select.value);
      this.picked = v === latest ? undefined : v;
      this.render();
    });
  }

  /** The histogram (bar chart) the tests read back. */
  get chart(): Chart<'bar', number[], string> | undefined {
    return this.histogram;
  }

  add(step: number, samples: readonly RolloutSampleMessage[], origin?: string): void {
    this.steps.set(step, [...samples]);
    while (this.steps.size > MAX_STEPS) this.steps.delete(Math.min(...this.steps.keys()));
    if (origin !== undefined) document.getElementById('rollouts-source')!.textContent = origin;
    this.renderSelect();
    this.render();
  }

  /** A new run (or a reloaded panel): no steps, none picked, the search kept. (A compare panel has no such tab.) */
  reset(): void {
    this.steps.clear();
    this.picked = undefined;
    const select = this.select() as VscodeSingleSelect | null;
    if (select) select.options = [];
    const caption = document.getElementById('rollouts-step');
    if (caption) {
      caption.textContent = 'No rollouts yet.';
      caption.classList.add('empty');
    }
    for (const id of ['rollouts-table', 'reward-histogram']) {
      const e = document.getElementById(id);
      if (e) e.hidden = true;
    }
    const source = document.getElementById('rollouts-source');
    if (source) source.textContent = '';
    this.transcripts.hide();
  }

  setTheme(theme: Theme): void {
    this.theme = theme;
    if (this.histogram) this.drawHistogram(this.shown());
  }

  private latest(): number | undefined {
    return this.steps.size ? Math.max(...this.steps.keys()) : undefined;
  }

  private current(): number | undefined {
    return this.picked !== undefined && this.steps.has(this.picked) ? this.picked : this.latest();
  }

  private select(): VscodeSingleSelect {
    return document.getElementById('rollouts-step-select') as VscodeSingleSelect;
  }

  private renderSelect(): void {
    const cur = this.current();
    const steps = [...this.steps.keys()].sort((a, b) => b - a);
    const select = this.select();
    select.options = steps.map((s) => ({
      label: String(s),
      value: String(s),
      description: '',
      selected: s === cur,
      disabled: false,
    }));
    // The options list leaves the selection as it was: the value picks the step.
    if (cur !== undefined) select.value = String(cur);
  }

  private shown(): RolloutSampleMessage[] {
    const step = this.current();
    const all = step === undefined ? [] : this.steps.get(step)!;
    const q = this.query.trim().toLowerCase();
    return q ? all.filter((s) => s.prompt.toLowerCase().includes(q) || s.response.toLowerCase().includes(q)) : all;
  }

  private render(): void {
    const step = this.current();
    if (step === undefined) return;
    const all = this.steps.get(step)!;
    const samples = this.shown();
    const caption = document.getElementById('rollouts-step')!;
    const n = (k: number) => `${k} sample${k === 1 ? '' : 's'}`;
    caption.textContent =
      samples.length === all.length
        ? `Step ${step}: ${n(all.length)}`
        : `Step ${step}: ${samples.length} of ${n(all.length)} match`;
    caption.classList.remove('empty');
    const table = document.getElementById('rollouts-table') as HTMLTableElement;
    table.tBodies[0].replaceChildren(
      ...samples.map((s) => {
        const tr = document.createElement('tr');
        for (const [text, cls] of [
          [s.reward === null ? 'n/a' : String(Number(s.reward.toFixed(4))), 'reward'],
          [s.prompt, 'text'],
          [s.response, 'text'],
        ]) {
          const td = document.createElement('td');
          td.className = cls;
          td.textContent = text;
          tr.append(td);
        }
        return tr;
      }),
    );
    table.hidden = samples.length === 0;
    const episodes = TranscriptView.wants(all);
    if (episodes) {
      table.hidden = true;
      this.transcripts.show(all, this.query);
    } else this.transcripts.hide();
    const search = document.getElementById('rollouts-search') as VscodeTextfield;
    search.placeholder = search.label = episodes ? SEARCH_TURNS : SEARCH_SAMPLES;
    this.drawHistogram(samples);
  }

  private drawHistogram(samples: readonly RolloutSampleMessage[]): void {
    const h = rewardHistogram(samples.map((s) => s.reward));
    const box = document.getElementById('reward-histogram')!;
    box.hidden = h.counts.length === 0;
    if (box.hidden) return;
    const labels = h.counts.map((_, i) => `${fmt(h.edges[i])} – ${fmt(h.edges[i + 1])}`);
    const t = this.theme;
    const font = { family: t.fontFamily, size: 11 };
    if (!this.histogram) {
      const canvas = document.getElementById('reward-histogram-canvas') as HTMLCanvasElement;
      this.histogram = new Chart(canvas, {
        type: 'bar',
        data: { labels: [], datasets: [{ label: 'samples', data: [] }] },
        options: {
          animation: false,
          responsive: true,
          maintainAspectRatio: false,
          plugins: { legend: { display: false }, tooltip: { enabled: true } },
          scales: {
            x: { type: 'category', ticks: { maxRotation: 0, autoSkip: true } },
            y: { type: 'linear', beginAtZero: true, ticks: { precision: 0 } },
          },
        },
      });
    }
    const c = this.histogram;
    c.data.labels = labels;
    const ds = c.data.datasets[0];
    ds.data = h.counts;
    ds.backgroundColor = t.series[0];
    ds.borderColor = t.series[0];
    (ds as { edges?: number[] }).edges = h.edges;
    for (const axis of [c.options.scales!.x!, c.options.scales!.y!]) {
      axis.grid!.color = t.grid;
      axis.border!.color = t.border;
      axis.ticks!.color = t.muted;
      axis.ticks!.font = font;
    }
    const tip = c.options.plugins!.tooltip!;
    tip.backgroundColor = t.tooltipBackground;
    tip.titleColor = t.foreground;
    tip.bodyColor = t.foreground;
    // Not update('none'): in that mode a bar keeps the options it resolved first, so a theme change (or a first
    // draw before the theme's variables) left the bars in the old colour (black in the transcripts' screenshots).
    c.update();
  }
}
