/// <reference lib="dom" />
/**
 * The compare panel's parts of the page: the runs in colour order, the run filter box and the legend. main.ts asks
 * it which series to draw and how (`decorate`); everything else about the charts stays in main.ts and chart-card.ts.
 */
import type { DashboardRun } from '../../../client/dashboard/messages';
import type { SeriesData } from '../charts/chart-card';
import type { VscodeTextfield } from '../controls/elements';
import { colourSlot, runFilter, type RunFilter } from './run-filter';
import { runNames } from './run-names';
import type { Theme } from '../theme';

export class CompareView {
  private runs: DashboardRun[] = [];
  private filter: RunFilter = runFilter('');
  private text = '';

  constructor(private readonly changed: () => void) {
    const box = this.box();
    box.label = 'Filter runs (regex)';
    box.addEventListener('input', () => this.setFilter(box.value));
  }

  get active(): boolean {
    return this.runs.length > 0;
  }

  get filterText(): string {
    return this.text;
  }

  /** The compared runs in colour order, each titled by its name (run-names.ts). */
  get named(): readonly DashboardRun[] {
    return this.runs;
  }

  /** The runs of a compare panel (none: a single-run panel, and the compare bar is hidden). */
  setRuns(runs: readonly DashboardRun[], theme: Theme): void {
    const names = runNames(runs);
    this.runs = runs.map((r) => ({ ...r, title: names.get(r.key)! }));
    document.getElementById('compare-bar')!.hidden = this.runs.length === 0;
    this.renderLegend(theme);
  }

  titleOf(key: string): string {
    return this.runs.find((r) => r.key === key)?.title ?? key;
  }

  setFilter(text: string): void {
    this.text = text;
    this.filter = runFilter(text);
    const box = this.box();
    if (box.value !== text) box.value = text;
    box.invalid = !this.filter.valid;
    const err = document.getElementById('run-filter-error')!;
    err.hidden = this.filter.valid;
    err.textContent = this.filter.valid
      ? ''
      : `Invalid regex: ${(this.filter.error ?? '').replace(/^Invalid regular expression: /, '')}`;
    for (const li of document.querySelectorAll<HTMLElement>('#run-legend li'))
      li.classList.toggle('filtered-out', !this.filter.match(li.dataset.title!));
    this.changed();
  }

  /** Whether a compared run is shown (always, in a single-run panel). */
  shows(key: string | undefined): boolean {
    if (!this.active || key === undefined) return true;
    return this.filter.match(this.titleOf(key));
  }

  /** The series of a card to draw: those of runs the filter lets through, coloured by their run's slot. */
  decorate(series: readonly SeriesData[], colours: number): SeriesData[] {
    if (!this.active) return [...series];
    const out: SeriesData[] = [];
    for (const s of series) {
      if (!this.shows(s.source)) continue;
      const index = this.runs.findIndex((r) => r.key === s.source);
      const slot = colourSlot(Math.max(0, index), colours);
      out.push({ ...s, colourIndex: slot.colour, dash: slot.dash, label: `${this.titleOf(s.source!)}/${s.run}` });
    }
    return out;
  }

  renderLegend(theme: Theme): void {
    const items = this.runs.map((r, i) => {
      const slot = colourSlot(i, theme.series.length);
      const li = document.createElement('li');
      li.dataset.key = r.key;
      li.dataset.title = r.title;
      li.classList.toggle('filtered-out', !this.filter.match(r.title));
      const swatch = document.createElement('span');
      swatch.className = `swatch${slot.dash.length ? ' dashed' : ''}`;
      // CSSOM, not a style attribute: the CSP allows no inline styles.
      swatch.style.borderColor = theme.series[slot.colour];
      const name = document.createElement('span');
      name.textContent = r.title;
      li.title = r.jobDir;
      li.append(swatch, name);
      return li;
    });
    document.getElementById('run-legend')!.replaceChildren(...items);
  }

  private box(): VscodeTextfield {
    return document.getElementById('run-filter') as VscodeTextfield;
  }
}
