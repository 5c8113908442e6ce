/// <reference lib="dom" />
/** The Rollouts tab: the latest step's samples. Model output is only ever `textContent`, never parsed as HTML. */
import type { RolloutSampleMessage } from '../../client/dashboard/messages';

export function showRollouts(step: number, samples: readonly RolloutSampleMessage[]): void {
  const caption = document.getElementById('rollouts-step')!;
  const table = document.getElementById('rollouts-table') as HTMLTableElement;
  const body = table.tBodies[0];
  caption.textContent = `Step ${step}: ${samples.length} sample${samples.length === 1 ? '' : 's'}`;
  caption.classList.remove('empty');
  const rows = samples.map((s) => {
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
  });
  body.replaceChildren(...rows);
  table.hidden = samples.length === 0;
}
