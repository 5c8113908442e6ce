/// <reference lib="dom" />
/**
 * The Config tab: each run's resolved config as text (`textContent` only: nothing from a file becomes markup), and
 * in a compare panel a table of the keys that differ, one column per run the run filter shows.
 */
import type { RunConfigMessage } from '../../../client/dashboard/messages';
import { differingKeys } from './config-diff';

export interface ConfigRunInfo {
  key: string;
  title: string;
}

export class ConfigView {
  private configs: RunConfigMessage[] = [];

  set(configs: readonly RunConfigMessage[]): void {
    this.configs = [...configs];
  }

  /** Redraws for the runs shown, in their order (a single-run panel: its one run). */
  render(runs: readonly ConfigRunInfo[], compare: boolean): void {
    const byKey = new Map(this.configs.map((c) => [c.key, c]));
    const shown = runs.filter((r) => byKey.has(r.key));
    document.getElementById('config-empty')!.hidden = shown.length > 0;
    this.renderDiff(compare ? shown.filter((r) => !byKey.get(r.key)!.error) : [], byKey);
    const blocks = shown.map((r) => {
      const c = byKey.get(r.key)!;
      const d = document.createElement('details');
      d.className = 'config-run';
      d.dataset.key = r.key;
      d.open = !compare;
      const summary = document.createElement('summary');
      const name = document.createElement('strong');
      name.textContent = r.title;
      const src = document.createElement('span');
      src.className = 'empty';
      src.textContent = ` ${c.source}`;
      summary.append(name, src);
      d.append(summary);
      if (c.error) {
        const p = document.createElement('p');
        p.className = 'input-error';
        p.textContent = c.error;
        d.append(p);
      } else {
        if (c.note) {
          const p = document.createElement('p');
          p.className = 'empty';
          p.textContent = c.note;
          d.append(p);
        }
        const pre = document.createElement('pre');
        pre.className = 'config-yaml';
        pre.textContent = c.yaml;
        d.append(pre);
      }
      return d;
    });
    document.getElementById('config-runs')!.replaceChildren(...blocks);
  }

  private renderDiff(runs: readonly ConfigRunInfo[], byKey: Map<string, RunConfigMessage>): void {
    const box = document.getElementById('config-diff')!;
    box.hidden = runs.length < 2;
    if (box.hidden) return;
    const rows = differingKeys(runs.map((r) => byKey.get(r.key)!.flat));
    const table = document.getElementById('config-diff-table') as HTMLTableElement;
    const head = document.createElement('tr');
    for (const text of ['Key', ...runs.map((r) => r.title)]) {
      const th = document.createElement('th');
      th.textContent = text;
      head.append(th);
    }
    table.tHead!.replaceChildren(head);
    table.tBodies[0].replaceChildren(
      ...rows.map((row) => {
        const tr = document.createElement('tr');
        const k = document.createElement('td');
        k.className = 'config-key';
        k.textContent = row.key;
        tr.append(k);
        for (const v of row.values) {
          const td = document.createElement('td');
          td.className = v === undefined ? 'config-value absent' : 'config-value';
          td.textContent = v === undefined ? '(not set)' : v;
          tr.append(td);
        }
        return tr;
      }),
    );
    document.getElementById('config-diff-title')!.textContent = rows.length
      ? `${rows.length} key${rows.length === 1 ? '' : 's'} differ`
      : 'No keys differ';
  }
}
