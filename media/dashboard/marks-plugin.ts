/**
 * Draws the timeline marks (marks.ts) as vertical lines across a card's plot: checkpoints dashed in the muted
 * foreground, weight syncs dotted in the theme's purple, each labelled at the top where there is room.
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
        g.setLineDash(m.kind === 'checkpoint' ? [4, 3] : [2, 2]);
        g.beginPath();
        g.moveTo(Math.round(px) + 0.5, top);
        g.lineTo(Math.round(px) + 0.5, bottom);
        g.stroke();
        const w = g.measureText(m.label).width;
        if (px + 2 > lastLabelEnd[m.kind] + 4 && px + 2 + w <= right) {
          g.fillText(m.label, px + 2, top + (m.kind === 'sync' ? 2 : 14));
          lastLabelEnd[m.kind] = px + 2 + w;
        }
      }
      g.restore();
      (chart as unknown as MarkedChart).$timelineMarks = drawn;
    },
  };
}
