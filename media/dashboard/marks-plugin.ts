/**
 * Draws the timeline marks (marks.ts) as vertical lines across a card's plot: checkpoints dashed in the muted
 * foreground, weight syncs dotted in the theme's purple, each labelled at the top where there is room. Syncs closer
 * than DENSE_PX apart (a sync every step over a long run) become ticks along the top instead, so the lines do not
 * hide the curves.
 */
import type { Chart, Plugin } from 'chart.js';

export interface PlacedMark {
  kind: 'sync' | 'checkpoint';
  x: number;
  label: string;
}

export interface MarkStyle {
  checkpoint: string;
  sync: string;
  font: string;
}

/** Below this many pixels between syncs on average, syncs are drawn as ticks. */
const DENSE_PX = 12;
const TICK_PX = 6;

/** A chart with the marks it drew last, in data units (the tests read them back). */
type MarkedChart = Chart & { $timelineMarks?: PlacedMark[] };

export function marksPlugin(get: () => { marks: readonly PlacedMark[]; style: MarkStyle }): Plugin<'line'> {
  return {
    id: 'timelineMarks',
    beforeDatasetsDraw(chart) {
      const { marks, style } = get();
      const scale = chart.scales.x;
      const { top, bottom, left, right } = chart.chartArea;
      const g = chart.ctx;
      const drawn: PlacedMark[] = [];
      // Syncs are labelled on the first line, checkpoints on the second: each row keeps its labels apart.
      const lastLabelEnd = { sync: -Infinity, checkpoint: -Infinity };
      const syncsInView = marks.filter((m) => {
        const px = m.kind === 'sync' ? scale.getPixelForValue(m.x) : NaN;
        return px >= left && px <= right;
      }).length;
      const syncsAsTicks = syncsInView > 1 && (right - left) / syncsInView < DENSE_PX;
      g.save();
      g.font = style.font;
      g.textBaseline = 'top';
      for (const m of marks) {
        const px = scale.getPixelForValue(m.x);
        if (!(px >= left && px <= right)) continue;
        drawn.push(m);
        g.strokeStyle = m.kind === 'checkpoint' ? style.checkpoint : style.sync;
        g.fillStyle = g.strokeStyle;
        g.lineWidth = 1;
        const tick = m.kind === 'sync' && syncsAsTicks;
        g.setLineDash(tick ? [] : m.kind === 'checkpoint' ? [4, 3] : [2, 2]);
        g.beginPath();
        g.moveTo(Math.round(px) + 0.5, top);
        g.lineTo(Math.round(px) + 0.5, tick ? top + TICK_PX : bottom);
        g.stroke();
        const w = g.measureText(m.label).width;
        if (px + 2 > lastLabelEnd[m.kind] + 4 && px + 2 + w <= right) {
          const row = m.kind === 'sync' ? (syncsAsTicks ? TICK_PX + 1 : 2) : syncsAsTicks ? 19 : 14;
          g.fillText(m.label, px + 2, top + row);
          lastLabelEnd[m.kind] = px + 2 + w;
        }
      }
      g.restore();
      (chart as unknown as MarkedChart).$timelineMarks = drawn;
    },
  };
}
