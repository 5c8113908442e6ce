/**
 * The baseline of bench/dashboard.bench.ts: the same charts as a plain Chart.js page would draw them — its
 * defaults (parsing, animation, points), no decimation, `update()` on every message.
 */
import { Chart, LinearScale, LineController, LineElement, PointElement } from 'chart.js';

Chart.register(LineController, LineElement, PointElement, LinearScale);

const charts = new Map();
window.__charts = charts;

window.addEventListener('message', (ev) => {
  const m = ev.data;
  if (m.type === 'init') {
    const grid = document.getElementById('grid');
    for (const s of m.series) {
      const box = document.createElement('div');
      box.style.cssText = 'position:relative;height:200px';
      const canvas = document.createElement('canvas');
      box.append(canvas);
      grid.append(box);
      charts.set(
        s.tag,
        new Chart(canvas, {
          type: 'line',
          data: { datasets: [{ label: s.tag, data: s.steps.map((x, i) => ({ x, y: s.values[i] })) }] },
          options: { responsive: true, maintainAspectRatio: false, scales: { x: { type: 'linear' } } },
        }),
      );
    }
  } else {
    const touched = new Set();
    for (const p of m.points) {
      charts.get(p.tag)?.data.datasets[0].data.push({ x: p.step, y: p.value });
      touched.add(p.tag);
    }
    for (const t of touched) charts.get(t).update();
  }
});
