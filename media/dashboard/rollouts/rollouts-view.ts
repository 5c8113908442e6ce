/// <reference lib="dom" />
/**
 * The Rollouts tab: samples per step and per evaluation, a selector (the latest explorer step by default, following
 * new steps until another entry is picked; an evaluation's records listed beside the step it ran at), a search box
 * (case-insensitive substring over prompt and response, or over every turn of an agent's episodes, its placeholder
 * saying which) and a reward histogram of the samples shown. Model output is only ever `textContent`, never parsed as
 * HTML.
 */
import { BarController, BarElement, CategoryScale, Chart, LinearScale, Tooltip } from 'chart.js';
import type { EvalOfRollouts, RolloutSampleMessage } from '../../../client/dashboard/messages';
import type { VscodeSingleSelect, VscodeTextfield } from '../controls/elements';
import { rewardHistogram } from './histogram';
import { TranscriptView } from './transcript-view';
import type { Theme } from '../theme';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip);

/** Entries kept in the page (the oldest steps' are dropped as new ones arrive). */
const MAX_STEPS = 200;

/** The records of one explorer step, or of one eval taskset's evaluation at a step. */
interface Entry {
  step: number;
  eval?: EvalOfRollouts;
  samples: RolloutSampleMessage[];
}

const keyOf = (step: number, ev?: EvalOfRollouts): string =>
  ev ? JSON.stringify([step, ev.role, ev.taskset]) : String(step);

/** What an evaluation is called: `bench` in `mode: bench`, else `eval`. */
const evalWord = (ev: EvalOfRollouts): string => (ev.role === 'bench' ? 'bench' : 'eval');

/** What the selector calls an entry: `30`, `30 · eval lake-eval`, `30 · bench lake-eval`. */
function entryLabel(e: Entry): string {
  return e.eval ? `${e.step} · ${evalWord(e.eval)} ${e.eval.taskset}` : String(e.step);
}

/** Newest step first; at one step the explorer's records, then the evaluations' by taskset. */
function entryOrder(a: Entry, b: Entry): number {
  if (a.step !== b.step) return b.step - a.step;
  if (!a.eval || !b.eval) return a.eval ? 1 : b.eval ? -1 : 0;
  return `${a.eval.role} ${a.eval.taskset}`.localeCompare(`${b.eval.role} ${b.eval.taskset}`);
}

const fmt = (x: number) => String(Number(x.toPrecision(3)));

/** What the search box matches, as its placeholder says: single-turn samples, or the turns of agent episodes. */
const SEARCH_SAMPLES = 'Search prompts and responses';
const SEARCH_TURNS = "Search the episodes' turns";

export class RolloutsView {
  private readonly entries = new Map<string, Entry>();
  /** The entry picked in the selector; undefined: follow the latest. */
  private picked: string | undefined;
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
      const v = select.value;
      this.picked = v === this.latest() ? undefined : v;
      this.render();
    });
  }

  /** The histogram (bar chart) the tests read back. */
  get chart(): Chart<'bar', number[], string> | undefined {
    return this.histogram;
  }

  add(step: number, samples: readonly RolloutSampleMessage[], origin?: string, ev?: EvalOfRollouts): void {
    this.entries.set(keyOf(step, ev), { step, ...(ev ? { eval: ev } : {}), samples: [...samples] });
    while (this.entries.size > MAX_STEPS) {
      const oldest = [...this.entries.entries()].reduce((a, b) => (b[1].step < a[1].step ? b : a));
      this.entries.delete(oldest[0]);
    }
    if (origin !== undefined) document.getElementById('rollouts-source')!.textContent = origin;
    this.renderSelect();
    this.render();
  }

  /** A new run (or a reloaded panel): no steps, none picked, the search kept. (A compare panel has no such tab.) */
  reset(): void {
    this.entries.clear();
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

  /** The latest explorer step's entry (a job with evaluations only: the latest evaluation's). */
  private latest(): string | undefined {
    const all = [...this.entries.values()];
    const steps = all.filter((e) => !e.eval);
    const newest = (steps.length ? steps : all).sort(entryOrder)[0];
    return newest && keyOf(newest.step, newest.eval);
  }

  private current(): string | undefined {
    return this.picked !== undefined && this.entries.has(this.picked) ? this.picked : this.latest();
  }

  private select(): VscodeSingleSelect {
    return document.getElementById('rollouts-step-select') as VscodeSingleSelect;
  }

  private renderSelect(): void {
    const cur = this.current();
    const select = this.select();
    const sorted = [...this.entries.values()].sort(entryOrder);
    // Wide enough for the longest label (an evaluation's names its taskset); the CSS width (6em) for steps alone.
    const longest = Math.max(0, ...sorted.map((e) => entryLabel(e).length));
    select.style.width = sorted.some((e) => e.eval) ? `min(${longest + 6}ch, 40em)` : '';
    select.options = sorted.map((e) => ({
      label: entryLabel(e),
      value: keyOf(e.step, e.eval),
      description: '',
      selected: keyOf(e.step, e.eval) === cur,
      disabled: false,
    }));
    // The options list leaves the selection as it was: the value picks the entry.
    if (cur !== undefined) select.value = cur;
  }

  private shown(): RolloutSampleMessage[] {
    const key = this.current();
    const all = key === undefined ? [] : this.entries.get(key)!.samples;
    const q = this.query.trim().toLowerCase();
    return q ? all.filter((s) => s.prompt.toLowerCase().includes(q) || s.response.toLowerCase().includes(q)) : all;
  }

  private render(): void {
    const key = this.current();
    if (key === undefined) return;
    const entry = this.entries.get(key)!;
    const all = entry.samples;
    const samples = this.shown();
    const caption = document.getElementById('rollouts-step')!;
    const n = (k: number) => `${k} sample${k === 1 ? '' : 's'}`;
    const what = entry.eval
      ? `${evalWord(entry.eval).replace(/^./, (c) => c.toUpperCase())} ${entry.eval.taskset} at step ${entry.step}`
      : `Step ${entry.step}`;
    caption.textContent =
      samples.length === all.length
        ? `${what}: ${n(all.length)}`
        : `${what}: ${samples.length} of ${n(all.length)} match`;
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
