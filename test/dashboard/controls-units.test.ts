/**
 * The pure parts of the dashboard's chart controls: the x axes and the outlier extent, the layout state, the
 * export messages (validated on receipt by the extension) and the extension's export writer, the run's start time
 * in `init`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { deflateSync } from 'node:zlib';
import { exportBytes, pngSize, writeExport } from '../../client/dashboard/export-file';
import { parseHostMessage, parseWebviewMessage } from '../../client/dashboard/messages';
import {
  formatClock,
  formatSeconds,
  outlierExtent,
  parseXAxis,
  quantileSorted,
  xValues,
} from '../../media/dashboard/charts/axes';
import { scalarsCsv } from '../../runtime/metrics/csv';
import { exportName, exportRows } from '../../media/dashboard/export/export-rows';
import { Layout, parseLayout } from '../../media/dashboard/cards/layout';
import { checkpointMarks, markX, MODEL_VERSION_TAG, syncMarks, trainerTimes } from '../../media/dashboard/charts/marks';
import {
  boxesOverlap,
  layoutMarkLabels,
  shortLabels,
  type LabelledMark,
} from '../../media/dashboard/charts/mark-labels';

/** A real PNG, built here by hand (signature, IHDR, IDAT, IEND; CRCs by the table-less bitwise CRC-32). */
function tinyPng(width: number, height: number): Buffer {
  const crc = (b: number[]) => {
    let c = ~0;
    for (const x of b) {
      c ^= x;
      for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
    }
    return ~c >>> 0;
  };
  const u32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
  const chunk = (type: string, data: number[]) => {
    const td = [...type].map((ch) => ch.charCodeAt(0)).concat(data);
    return [...u32(data.length), ...td, ...u32(crc(td))];
  };
  const ihdr = [...u32(width), ...u32(height), 8, 2, 0, 0, 0];
  const idat = [...deflateSync(new Uint8Array((1 + 3 * width) * height))];
  return Buffer.from([
    0x89,
    0x50,
    0x4e,
    0x47,
    0x0d,
    0x0a,
    0x1a,
    0x0a,
    ...chunk('IHDR', ihdr),
    ...chunk('IDAT', idat),
    ...chunk('IEND', []),
  ]);
}

describe('dashboard axes', () => {
  test('x values: steps, relative seconds, or the run’s start plus them; wall time without a start falls back to relative', () => {
    assert.deepEqual(xValues('step', [1, 2], [5, 9], 100), [1, 2]);
    assert.deepEqual(xValues('relative', [1, 2], [5, 9], 100), [5, 9]);
    assert.deepEqual(xValues('wall', [1, 2], [5, 9], 100), [105, 109]);
    assert.deepEqual(xValues('wall', [1, 2], [5, 9], undefined), [5, 9]);
    assert.equal(parseXAxis('wall'), 'wall');
    assert.equal(parseXAxis('bogus'), 'step');
    const t = Date.UTC(2026, 11, 1, 10, 4, 5) / 1000;
    const d = new Date(t * 1000);
    assert.equal(formatClock(t), `${String(d.getHours()).padStart(2, '0')}:04:05`);
  });

  test('relative-time ticks closer than 0.1 s apart stay distinct (their spacing sets the decimals)', () => {
    const ticks = [0, 0.05, 0.1, 0.15, 0.2];
    assert.deepEqual(
      ticks.map((x) => formatSeconds(x, 0.05)),
      ['0s', '0.05s', '0.1s', '0.15s', '0.2s'],
    );
    assert.deepEqual(
      [0, 5, 10].map((x) => formatSeconds(x, 5)),
      ['0s', '5s', '10s'],
    );
    assert.equal(formatSeconds(0.15), '0.1s'); // no spacing (a tooltip): one decimal under 10 s
    assert.equal(formatSeconds(185, 0.5), '3m05s');
  });

  test('percentiles interpolate linearly between ranks (numpy’s default), by hand', () => {
    // 0..10: the 5th percentile is at rank 0.5 -> 0.5; the 95th at 9.5 -> 9.5.
    const s = Array.from({ length: 11 }, (_, i) => i);
    assert.equal(quantileSorted(s, 0.05), 0.5);
    assert.equal(quantileSorted(s, 0.95), 9.5);
    assert.equal(quantileSorted([4], 0.05), 4);
    // numpy.percentile([1, 2, 3, 4, 100], [5, 95]) = [1.2, 80.8]
    const e = outlierExtent([{ xs: [1, 2, 3, 4, 5], ys: [100, 1, 3, 2, 4] }])!;
    assert.ok(Math.abs(e.min - 1.2) < 1e-12 && Math.abs(e.max - 80.8) < 1e-12, `${e.min}..${e.max}`);
  });

  test('the outlier extent counts only finite values in the x range (positive ones on a log axis); none or one value: no extent', () => {
    const col = { xs: [1, 2, 3, 4, 5, 6], ys: [-9, 1, null, 2, 3, 1e9] };
    assert.deepEqual(outlierExtent([col], 2, 5), { min: 1 + 0.1 * 1, max: 3 - 0.1 * 1 });
    assert.equal(outlierExtent([col], 7, 8), undefined);
    assert.equal(outlierExtent([{ xs: [1, 2], ys: [3, 3] }]), undefined);
    const log = outlierExtent(
      [
        { xs: [1, 2, 3], ys: [-5, 0, 10] },
        { xs: [1], ys: [20] },
      ],
      undefined,
      undefined,
      true,
    )!;
    assert.ok(Math.abs(log.min - 10.5) < 1e-12 && Math.abs(log.max - 19.5) < 1e-12);
  });
});

describe('dashboard layout state', () => {
  test('pins override the defaults and go back to them; collapsed groups toggle; malformed state is ignored', () => {
    const l = new Layout(parseLayout(undefined));
    assert.equal(l.groupFor('critic/score/mean'), 'pinned');
    assert.equal(l.togglePin('critic/score/mean'), false);
    assert.equal(l.groupFor('critic/score/mean'), 'critic');
    assert.equal(l.togglePin('actor/kl_loss'), true);
    assert.equal(l.groupFor('actor/kl_loss'), 'pinned');
    assert.deepEqual(l.state.pins, { 'critic/score/mean': false, 'actor/kl_loss': true });
    l.togglePin('critic/score/mean');
    assert.deepEqual(l.state.pins, { 'actor/kl_loss': true });
    assert.equal(l.toggleCollapsed('actor'), true);
    assert.equal(l.isCollapsed('actor'), true);
    assert.equal(l.toggleCollapsed('actor'), false);
    assert.deepEqual(parseLayout({ collapsed: ['a', 3, 'a'], pins: { x: true, y: 'yes' } }), {
      collapsed: ['a'],
      pins: { x: true },
    });
    assert.deepEqual(parseLayout({ collapsed: 'a', pins: [1] }), { collapsed: [], pins: {} });
  });
});

describe('dashboard exports', () => {
  test('CSV: a card’s rows (wall time from the run’s start), written by the metrics CLI’s writer: its header, RFC 4180 quoting, nan for non-finite', () => {
    const rows = exportRows('a,"b"', [{ run: 'trainer', steps: [1, 2], times: [0.5, 1], values: [0.25, null] }], 1000);
    assert.deepEqual(rows, [
      { run: 'trainer', tag: 'a,"b"', step: 1, wallTime: 1000.5, value: 0.25 },
      { run: 'trainer', tag: 'a,"b"', step: 2, wallTime: 1001, value: null },
    ]);
    assert.equal(
      scalarsCsv(rows),
      'run,tag,step,wall_time,value\ntrainer,"a,""b""",1,1000.5,0.25\ntrainer,"a,""b""",2,1001,nan\n',
    );
    assert.equal(
      scalarsCsv(exportRows('t', [{ run: 'r', steps: [3], times: [4], values: [5] }], undefined)),
      'run,tag,step,wall_time,value\nr,t,3,,5\n',
    );
    assert.equal(exportName('eval/math/accuracy/mean@4', 'png'), 'eval_math_accuracy_mean@4.png');
    assert.equal(exportName('../x', 'csv'), '__x.csv');
  });

  test('export messages are validated on receipt: format, a plain file name with its extension, a base64 PNG data URL', () => {
    const png = `data:image/png;base64,${tinyPng(3, 2).toString('base64')}`;
    assert.deepEqual(parseWebviewMessage({ type: 'export', format: 'png', fileName: 'a.png', data: png }), {
      type: 'export',
      format: 'png',
      fileName: 'a.png',
      data: png,
    });
    assert.ok(
      parseWebviewMessage({
        type: 'export',
        format: 'csv',
        fileName: 'a.csv',
        rows: [{ run: 'r', tag: 't', step: 1, wallTime: null, value: 1 }],
      }),
    );
    for (const bad of [
      { type: 'export', format: 'svg', fileName: 'a.svg', data: '' },
      { type: 'export', format: 'csv', fileName: '../a.csv', rows: [] },
      { type: 'export', format: 'csv', fileName: 'a/b.csv', rows: [] },
      { type: 'export', format: 'csv', fileName: 'a.txt', rows: [] },
      { type: 'export', format: 'csv', fileName: 'a.csv', data: 'run\n' },
      {
        type: 'export',
        format: 'csv',
        fileName: 'a.csv',
        rows: [{ run: 'r', tag: 't', step: 'x', wallTime: null, value: 1 }],
      },
      {
        type: 'export',
        format: 'csv',
        fileName: 'a.csv',
        rows: [{ run: 'r', tag: 't', step: 1, wallTime: null, value: 'NaN' }],
      },
      { type: 'export', format: 'png', fileName: 'a.png', data: 'data:image/jpeg;base64,AAAA' },
      { type: 'export', format: 'png', fileName: 'a.png', data: 'data:image/png;base64,<script>' },
    ]) {
      assert.equal(parseWebviewMessage(bad), undefined, JSON.stringify(bad));
    }
  });

  test('the extension’s writer: CSV as UTF-8, the PNG decoded (and refused when it is not one)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dash-export-unit-'));
    writeExport(join(dir, 'x.csv'), {
      type: 'export',
      format: 'csv',
      fileName: 'x.csv',
      rows: [{ run: 'träiner', tag: 't', step: 2, wallTime: 7.5, value: -1 }],
    });
    assert.equal(readFileSync(join(dir, 'x.csv'), 'utf8'), 'run,tag,step,wall_time,value\nträiner,t,2,7.5,-1\n');
    const png = tinyPng(3, 2);
    writeExport(join(dir, 'x.png'), {
      type: 'export',
      format: 'png',
      fileName: 'x.png',
      data: `data:image/png;base64,${png.toString('base64')}`,
    });
    const back = readFileSync(join(dir, 'x.png'));
    assert.deepEqual(back, png);
    assert.deepEqual(pngSize(new Uint8Array(back)), { width: 3, height: 2 });
    assert.throws(
      () =>
        exportBytes({
          type: 'export',
          format: 'png',
          fileName: 'x.png',
          data: `data:image/png;base64,${Buffer.from('GIF89a not a png at all').toString('base64')}`,
        }),
      /not a PNG/,
    );
  });
});

describe('init carries the run’s start time', () => {
  test('a finite, non-negative startedAt passes; anything else drops the message', () => {
    const run = { key: 'k', title: 't', jobDir: '/j', status: 'running' };
    assert.equal(
      (parseHostMessage({ type: 'init', run: { ...run, startedAt: 1.7e9 }, series: [] }) as any).run.startedAt,
      1.7e9,
    );
    assert.ok(parseHostMessage({ type: 'init', run, series: [] }));
    for (const startedAt of ['1', -1, null, Number.NaN])
      assert.equal(
        parseHostMessage({ type: 'init', run: { ...run, startedAt }, series: [] }),
        undefined,
        String(startedAt),
      );
  });
});

describe('timeline marks', () => {
  test('a sync where the model version changes (not at the first version), once for several models; checkpoints timed by the trainer', () => {
    const a = { run: 'explorer', steps: [1, 2, 3, 4], times: [1, 2, 3, 4], values: [0, null, 2, 2] };
    const b = { run: 'explorer', steps: [1, 2, 3, 4], times: [1, 2, 3, 4], values: [0, 0, 2, 3] };
    assert.deepEqual(syncMarks([a, b]), [
      { kind: 'sync', step: 3, time: 3, label: 'v2 (lag 1)' },
      { kind: 'sync', step: 4, time: 4, label: 'v3 (lag 1)' },
    ]);
    assert.ok(
      MODEL_VERSION_TAG.test('rollout/model_version') &&
        MODEL_VERSION_TAG.test('rollout/model_0/model_version') &&
        !MODEL_VERSION_TAG.test('rollout/model_versions'),
    );
    const times = trainerTimes([
      { run: 'sft/trainer', steps: [1, 2], times: [10, 20], values: [1, 1] },
      { run: 'explorer', steps: [3], times: [99], values: [1] },
    ]);
    assert.deepEqual(
      [...times].map(([stage, t]) => [stage, [...t]]),
      [
        [
          'sft',
          [
            [1, 10],
            [2, 20],
          ],
        ],
      ],
    );
    const [c2, c3] = checkpointMarks(
      [
        { step: 3, name: 'global_step_3' },
        { step: 2, name: 'global_step_2' },
      ],
      times,
    );
    assert.deepEqual(c2, { kind: 'checkpoint', step: 2, time: 20, label: 'ckpt 2' });
    assert.equal(markX(c2, 'wall', 1000), 1020);
    assert.equal(markX(c3, 'relative', 1000), undefined, 'no trainer time for step 3: not on a time axis');
    assert.equal(markX(c3, 'step', 1000), 3);
  });

  test('in a staged run each mark is its stage’s: checkpoints timed by their own stage’s trainer, syncs kept per stage', () => {
    const times = trainerTimes([
      { run: 'sft_warmup/trainer', steps: [1, 2], times: [10, 20], values: [1, 1] },
      { run: 'grpo/trainer', steps: [1, 2], times: [30, 40], values: [1, 1] },
    ]);
    assert.deepEqual(
      checkpointMarks(
        [
          { step: 2, name: 'global_step_2', stage: 'sft_warmup' },
          { step: 2, name: 'global_step_2', stage: 'grpo' },
          { step: 1, name: 'global_step_1' },
        ],
        times,
      ),
      [
        // A checkpoint without a stage in a run with several: no trainer of its own to time it.
        { kind: 'checkpoint', step: 1, time: undefined, label: 'ckpt 1' },
        { kind: 'checkpoint', step: 2, time: 20, stage: 'sft_warmup', label: 'sft_warmup ckpt 2' },
        { kind: 'checkpoint', step: 2, time: 40, stage: 'grpo', label: 'grpo ckpt 2' },
      ],
    );
    // Two GRPO stages syncing at the same explorer step and version: one mark each, at each stage's time.
    const a = { run: 'grpo/explorer', steps: [1, 2], times: [1, 2], values: [0, 1] };
    const b = { run: 'grpo2/explorer', steps: [1, 2], times: [11, 12], values: [0, 1] };
    assert.deepEqual(syncMarks([a, b]), [
      { kind: 'sync', step: 2, time: 2, stage: 'grpo', label: 'v1 (lag 1)' },
      { kind: 'sync', step: 2, time: 12, stage: 'grpo2', label: 'v1 (lag 1)' },
    ]);
  });

  test('checkpoints messages are validated', () => {
    assert.deepEqual(
      parseHostMessage({ type: 'checkpoints', checkpoints: [{ step: 4, name: 'global_step_4', extra: 1 }] }),
      { type: 'checkpoints', checkpoints: [{ step: 4, name: 'global_step_4' }] },
    );
    assert.deepEqual(
      parseHostMessage({ type: 'checkpoints', checkpoints: [{ step: 4, name: 'global_step_4', stage: 'grpo' }] }),
      { type: 'checkpoints', checkpoints: [{ step: 4, name: 'global_step_4', stage: 'grpo' }] },
    );
    for (const checkpoints of [
      [{ step: -1, name: 'x' }],
      [{ step: 1 }],
      'x',
      [{ step: Number.NaN, name: 'x' }],
      [{ step: 1, name: 'x', stage: 2 }],
    ])
      assert.equal(parseHostMessage({ type: 'checkpoints', checkpoints }), undefined);
  });
});

describe('timeline mark labels', () => {
  // 6 px a character: about the labels' 10 px font.
  const measure = (t: string) => t.length * 6;
  const area = (left: number, right: number) => ({ left, right, rows: { sync: 2, checkpoint: 14 }, rowHeight: 12 });

  test('short forms: a checkpoint without its stage, a sync without its lag', () => {
    assert.deepEqual(shortLabels('sft_warmup ckpt 12'), ['sft_warmup ckpt 12', 'ckpt 12']);
    assert.deepEqual(shortLabels('v3 (lag 1)'), ['v3 (lag 1)', 'v3']);
    assert.deepEqual(shortLabels('ckpt 4'), ['ckpt 4']);
  });

  test('dense marks at every width from 20 to 600 px: no two labels overlap, none leaves the plot', () => {
    // Two stages' checkpoints and syncs, interleaved out of x order as a staged run's are on a time axis.
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let width = 20; width <= 600; width += 7) {
      const marks: LabelledMark[] = Array.from({ length: 40 }, (_, i) => {
        const kind = i % 3 === 0 ? 'sync' : 'checkpoint';
        const label = kind === 'sync' ? `v${i} (lag 1)` : `${i % 2 ? 'grpo' : 'sft_warmup'} ckpt ${i}`;
        return { kind, px: 30 + rand() * width, labels: shortLabels(label) };
      });
      const boxes = layoutMarkLabels(marks, measure, area(30, 30 + width));
      for (const b of boxes) {
        assert.ok(b.x >= 30 && b.x + b.width <= 30 + width, `${width}: ${b.text} at ${b.x}`);
        assert.equal(b.width, measure(b.text));
      }
      for (let i = 0; i < boxes.length; i++)
        for (let j = i + 1; j < boxes.length; j++)
          assert.ok(!boxesOverlap(boxes[i], boxes[j]), `${width}: ${JSON.stringify([boxes[i], boxes[j]])}`);
      if (width >= 120) assert.ok(boxes.length >= 2, `${width}: ${boxes.length} labels`);
    }
  });

  test('left to right, the latest first: a label left of its line at the plot’s end, its short form where the long one has no room', () => {
    const marks: LabelledMark[] = [
      { kind: 'checkpoint', px: 190, labels: shortLabels('grpo ckpt 4') },
      { kind: 'checkpoint', px: 10, labels: shortLabels('grpo ckpt 1') },
      { kind: 'checkpoint', px: 80, labels: shortLabels('grpo ckpt 2') },
      { kind: 'checkpoint', px: 100, labels: shortLabels('grpo ckpt 3') },
      { kind: 'sync', px: 100, labels: shortLabels('v3 (lag 1)') },
    ];
    const boxes = layoutMarkLabels(marks, measure, area(0, 200));
    assert.deepEqual(
      boxes.map((b) => `${b.kind} ${b.text} ${b.x}`),
      [
        // The latest checkpoint: no room right of it, so left of its line (190 − 2 − 66).
        'checkpoint grpo ckpt 4 122',
        'sync v3 (lag 1) 102',
        'checkpoint grpo ckpt 1 12',
        // 82 to 148 would run into `grpo ckpt 4`: the short form fits (82 + 36 + 4 ≤ 122).
        'checkpoint ckpt 2 82',
      ],
    );
  });
});
