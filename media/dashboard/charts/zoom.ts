/// <reference lib="dom" />
/**
 * Drag-zoom on x, our own (chartjs-plugin-zoom would bring hammerjs): press, drag across the plot and release to
 * show only that x range; double-click or the card's Reset button to show everything again. The selection is drawn
 * by a Chart.js plugin while dragging; a drag of a few pixels is a click, not a zoom.
 */
import type { Chart, Plugin } from 'chart.js';
import { cardButton } from '../controls/elements';

/** A drag narrower than this (CSS pixels) does not zoom. */
const MIN_DRAG_PX = 5;

export interface XRange {
  min: number;
  max: number;
}

interface Selecting {
  from: number;
  to: number;
}

const selections = new WeakMap<Chart, Selecting>();

/** Draws the band being selected. Registered per chart (`plugins: [selectionPlugin(colour)]`). */
export function selectionPlugin(colour: () => string): Plugin<'line'> {
  return {
    id: 'dragZoomSelection',
    afterDraw(chart) {
      const s = selections.get(chart as unknown as Chart);
      if (!s) return;
      const { top, bottom, left, right } = chart.chartArea;
      const a = Math.max(left, Math.min(s.from, s.to));
      const b = Math.min(right, Math.max(s.from, s.to));
      const g = chart.ctx;
      g.save();
      g.fillStyle = colour();
      g.fillRect(a, top, b - a, bottom - top);
      g.restore();
    },
  };
}

export class DragZoom {
  /** The range shown, or undefined when zoomed out. */
  range: XRange | undefined;
  readonly resetButton: HTMLElement;

  constructor(
    private readonly chart: Chart,
    private readonly apply: (range: XRange | undefined) => void,
  ) {
    const canvas = chart.canvas;
    this.resetButton = cardButton('Reset', 'reset-zoom', 'Show the whole x range (or double-click the chart)', () =>
      this.reset(),
    );
    this.resetButton.hidden = true;
    canvas.addEventListener('pointerdown', (e) => this.down(e));
    canvas.addEventListener('pointermove', (e) => this.move(e));
    canvas.addEventListener('pointerup', (e) => this.up(e));
    canvas.addEventListener('pointercancel', () => this.cancel());
    canvas.addEventListener('dblclick', () => this.reset());
  }

  private x(e: PointerEvent): number {
    return e.clientX - this.chart.canvas.getBoundingClientRect().left;
  }

  private down(e: PointerEvent): void {
    if (e.button !== 0) return;
    const x = this.x(e);
    const { left, right } = this.chart.chartArea;
    if (x < left || x > right) return;
    this.chart.canvas.setPointerCapture(e.pointerId);
    selections.set(this.chart, { from: x, to: x });
  }

  private move(e: PointerEvent): void {
    const s = selections.get(this.chart);
    if (!s) return;
    s.to = this.x(e);
    this.chart.draw();
  }

  private up(e: PointerEvent): void {
    const s = selections.get(this.chart);
    if (!s) return;
    s.to = this.x(e);
    this.cancel();
    if (Math.abs(s.to - s.from) < MIN_DRAG_PX) return;
    const { left, right } = this.chart.chartArea;
    const px = (p: number) => Math.min(right, Math.max(left, p));
    const scale = this.chart.scales.x;
    const a = scale.getValueForPixel(px(Math.min(s.from, s.to)));
    const b = scale.getValueForPixel(px(Math.max(s.from, s.to)));
    if (a === undefined || b === undefined || !(b > a)) return;
    this.set({ min: a, max: b });
  }

  private cancel(): void {
    if (selections.delete(this.chart)) this.chart.draw();
  }

  set(range: XRange | undefined): void {
    this.range = range;
    this.resetButton.hidden = range === undefined;
    this.apply(range);
  }

  reset(): void {
    if (this.range) this.set(undefined);
  }
}
