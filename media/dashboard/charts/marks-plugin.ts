/**
 * Draws the timeline marks (marks.ts) as vertical lines across a card's plot: checkpoints dashed in the muted
 * foreground, weight syncs dotted in the theme's purple, each labelled at the top where there is room
 * (mark-labels.ts: no two labels overlap). Syncs closer than DENSE_PX apart (a sync every step over a long run)
 * become ticks along the top instead, so the lines do not hide the curves. Labels are haloed in the background colour,
 * so the lines and curves that cross them do not cut through the text.
 */
import type { Chart, Plugin } from 'chart.js';
import { layoutMarkLabels, shortLabels, type LabelBox, type LabelledMark } from './mark-labels';

export interface PlacedMark {
  kind: 'sync' | 'checkpoint';
  x: number;
  label: string;
}

export interface MarkStyle {
  checkpoint: string;
  /** Checkpoint labels: the muted foreground at full strength (small text needs the contrast). */
  checkpointText: string;
  sync: string;
  /** The halo behind the labels: the card's background. */
  background: string;
  /** The labels' font size in pixels, and family. */
  fontSize: number;
  fontFamily: string;
}

/** Below this many pixels between syncs on average, syncs are drawn as ticks. */
const DENSE_PX = 12;
const TICK_PX = 6;

/** A chart with the marks and labels it drew last (the tests read them back): marks in data units, labels in pixels. */
type MarkedChart = Chart & { $timelineMarks?: PlacedMark[]; $timelineLabels?: LabelBox[] };

export function marksPlugin(get: () => { marks: readonly PlacedMark[]; style: MarkStyle }): Plugin<'line'> {
  return {
    id: 'timelineMarks',
    beforeDatasetsDraw(chart) {
      const { marks, style } = get();
      const scale = chart.scales.x;
      const { top, bottom, left, right } = chart.chartArea;
      const g = chart.ctx;
      const inView = marks
        .map((m) => ({ m, px: scale.getPixelForValue(m.x) }))
        .filter(({ px }) => px >= left && px <= right);
      const syncsInView = inView.filter(({ m }) => m.kind === 'sync').length;
      const syncsAsTicks = syncsInView > 1 && (right - left) / syncsInView < DENSE_PX;
      g.save();
      g.font = `${style.fontSize}px ${style.fontFamily}`;
      g.textBaseline = 'top';
      g.lineWidth = 1;
      for (const { m, px } of inView) {
        g.strokeStyle = m.kind === 'checkpoint' ? style.checkpoint : style.sync;
        const tick = m.kind === 'sync' && syncsAsTicks;
        g.setLineDash(tick ? [] : m.kind === 'checkpoint' ? [4, 3] : [2, 2]);
        g.beginPath();
        g.moveTo(Math.round(px) + 0.5, top);
        g.lineTo(Math.round(px) + 0.5, tick ? top + TICK_PX : bottom);
        g.stroke();
      }
      const rowHeight = Math.ceil(style.fontSize * 1.2);
      const first = top + (syncsAsTicks ? TICK_PX + 1 : 2);
      const labels = layoutMarkLabels(
        inView.map(({ m, px }): LabelledMark => ({ kind: m.kind, px, labels: shortLabels(m.label) })),
        (text) => g.measureText(text).width,
        { left, right, rows: { sync: first, checkpoint: first + rowHeight }, rowHeight },
      );
      g.setLineDash([]);
      g.lineJoin = 'round';
      g.lineWidth = 3;
      g.strokeStyle = style.background;
      for (const l of labels) {
        g.fillStyle = l.kind === 'checkpoint' ? style.checkpointText : style.sync;
        // The text sits in the middle of its row (`top` puts the em box's top at y; the row is 1.2 em).
        const y = l.y + Math.floor((rowHeight - style.fontSize) / 2);
        g.strokeText(l.text, l.x, y);
        g.fillText(l.text, l.x, y);
      }
      g.restore();
      const marked = chart as unknown as MarkedChart;
      marked.$timelineMarks = inView.map(({ m }) => m);
      marked.$timelineLabels = labels;
    },
  };
}
