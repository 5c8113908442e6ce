/**
 * What Trinity's sample strategies add to reading a batch (trinity/algorithm/sample_strategy/sample_strategy.py):
 * `staleness_control`'s lowest model version a trainer step reads (Trinity-RFT PR #445), and every strategy's
 * `sample/model_version` stats over the batch's experiences that carry a model version (`sample/model_version_drift`
 * too on main, PR #579). The reading itself is the input's (channel-input.ts, buffer-input.ts).
 */
import { atLeast, type Release } from '../../../config/releases';
import type { ExperienceBufferConfig, StorageConfig } from '../../../config/types.generated';
import { gatherMetrics } from '../../algorithm';
import type { Experience } from '../../experience';
import type { RunLog } from '../../monitor/run-log';
import type { AlgorithmParts } from '../stage/algorithm-setup';

/**
 * The lowest model version trainer step `step` (1-based: Trinity samples for `train_step_num + 1`) reads with
 * `staleness_control`, or undefined for the other strategies. `StalenessControlSampleStrategy.sample`:
 * `max(step − max_staleness, 0)` up to v0.5.2 (e412fbe…eedef4b), `max(step − max_staleness − 1, 0)` on main
 * (fbacac3, PR #576): main's trainer step s then reads versions ≥ (s − 1) − max_staleness, i.e. no experience more
 * than `max_staleness` versions behind the weights it trains. `max_staleness` defaults to infinity (no bound).
 */
export function stalenessBound(
  algorithm: Pick<AlgorithmParts, 'sampleStrategy' | 'sampleStrategyArgs'>,
  release: Release,
  /** The experience buffer read (null: both mode's default queue). */
  buffer: ExperienceBufferConfig | StorageConfig | null,
  log: RunLog,
): ((step: number) => number) | undefined {
  if (algorithm.sampleStrategy !== 'staleness_control') return undefined;
  if (buffer?.storage_type === 'file') {
    // trinity/buffer/reader/file_reader.py `read(batch_size, **kwargs)` drops the min_model_version it is passed.
    log(
      'info',
      "algorithm.sample_strategy staleness_control: a file experience buffer is read whole, as Trinity's file reader ignores the minimum model version",
    );
    return undefined;
  }
  const maxStaleness = Number(algorithm.sampleStrategyArgs.max_staleness ?? Infinity);
  const lag = release === 'main' ? maxStaleness + 1 : maxStaleness;
  return (step) => Math.max(step - lag, 0);
}

/**
 * `SampleStrategy.set_model_version_metric` (from v0.4.0): `sample/model_version/{mean,max,min}` over the experiences
 * with a model version, and on main `sample/model_version_drift/…` (the versions the explorer moved on while the
 * experience's task ran; 0 when absent). Nothing when no experience has one (SFT and DPO data).
 */
export function sampleMetrics(batch: readonly Experience[], release: Release): Record<string, number> {
  if (!atLeast(release, 'v0.4.0')) return {};
  const drift = release === 'main';
  const rows: Record<string, number>[] = [];
  for (const e of batch) {
    const version = e.info?.model_version;
    if (typeof version !== 'number') continue;
    const d = e.info?.model_version_drift;
    rows.push(
      drift
        ? { model_version: version, model_version_drift: typeof d === 'number' ? d : 0 }
        : { model_version: version },
    );
  }
  return gatherMetrics(rows, 'sample');
}
