/**
 * `_check_algorithm` (<= v0.4.0) / `AlgorithmConfigValidator` (>= v0.5.0): the algorithm type, its own checks
 * (DPO), the default pieces it fills in, and the `*_args` defaults.
 */
import {
  ALGORITHM_PIECES,
  algorithmTypeAt,
  BASE_LOSS_AGG_MODE,
  effectiveAlgorithmDefaults,
  fnSpecAt,
} from '../../model/algorithms';
import { registryNamesAt } from '../../model/registries';
import { atLeast } from '../../releases';
import { didYouMean } from '../../suggest';
import type { CheckContext } from '../check-context';

/** Returns false when the algorithm type is unknown (Trinity crashes there; later algorithm rules are moot). */
export function checkAlgorithm(ctx: CheckContext): boolean {
  const type = String(ctx.get('algorithm.algorithm_type'));
  const spec = algorithmTypeAt(type, ctx.release);
  if (!spec && ctx.isRegistered('algorithm_type', type)) return false; // a plugin's algorithm: its defaults are unknown
  if (!spec) {
    const names = registryNamesAt('algorithm_type', ctx.release);
    ctx.report(
      'TRN201',
      `Invalid algorithm_type \`${type}\` for Trinity ${ctx.release}.${didYouMean(type, names)}`,
      'algorithm.algorithm_type',
      { candidates: names },
    );
    return false;
  }
  if (type === 'dpo') checkDpo(ctx);
  if (type === 'sft' && ctx.since('v0.5.0')) checkOfflineAlgorithm(ctx, 'sft');
  if ((type === 'dpo' || type === 'sft') && ctx.since('v0.5.0')) {
    // Their check_config ties weight sync to checkpoints: the sync interval becomes the save interval.
    const save = ctx.get('trainer.save_interval');
    if (ctx.get('synchronizer.sync_interval') !== save) {
      const why = ctx.written('trainer.save_interval') ? 'trainer.save_interval' : 'algorithm.algorithm_type';
      ctx.force(
        'synchronizer.sync_interval',
        save,
        'TRN204',
        `${type.toUpperCase()} sets \`synchronizer.sync_interval\` to \`trainer.save_interval\` (${save}).`,
        why,
      );
    }
  }

  const defaults = effectiveAlgorithmDefaults(type, ctx.release)!;
  const filled: string[] = [];
  for (const { key } of ALGORITHM_PIECES) {
    if (ctx.get(`algorithm.${key}`) === null || ctx.get(`algorithm.${key}`) === undefined) {
      ctx.fill(`algorithm.${key}`, defaults[key as keyof typeof defaults], `the default \`${key}\` of \`${type}\``);
      filled.push(`${key}: ${defaults[key as keyof typeof defaults]}`);
    }
  }
  if (filled.length > 0) {
    ctx.report('TRN203', `\`${type}\` fills in ${filled.join(', ')}.`, 'algorithm.algorithm_type', {
      value: Object.fromEntries(filled.map((f) => f.split(': '))),
    });
  }
  for (const { key, registry } of ALGORITHM_PIECES) {
    const name = String(ctx.get(`algorithm.${key}`));
    if (!ctx.isRegistered(registry, name)) {
      const names = registryNamesAt(registry, ctx.release);
      ctx.report(
        'TRN202',
        `Invalid ${key} \`${name}\` for Trinity ${ctx.release}.${didYouMean(name, names)}`,
        ctx.written(`algorithm.${key}`) ? (`algorithm.${key}` as const) : 'algorithm.algorithm_type',
        { candidates: names },
      );
      continue;
    }
    const argsKey = `algorithm.${key}_args` as const;
    const fn = fnSpecAt(registry, name, ctx.release);
    // The type's default_config() fills a null `<fn>_args` first; default_args() only what is still null.
    const fromType = spec.fnArgs?.[`${key}_args`];
    const unset = ctx.get(argsKey) === null || ctx.get(argsKey) === undefined;
    if (unset && fromType) {
      ctx.fill(argsKey, structuredClone(fromType), `the default \`${key}_args\` of \`${type}\``);
    } else if (unset && fn) {
      ctx.fill(argsKey, structuredClone(fn.defaultArgs), `\`${name}\`'s default arguments`);
    }
  }
  checkLossAggMode(ctx);
  checkOptimizer(ctx);
  return true;
}

/**
 * The `check_config` DPO (every release) and SFT (v0.5.0+) share: they train offline on a dataset, so `train` mode
 * needs its path, `both`/`explore` are refused, and weights sync through checkpoints.
 */
function checkOfflineAlgorithm(ctx: CheckContext, type: 'dpo' | 'sft'): void {
  const name = type.toUpperCase();
  const data = type === 'dpo' ? 'the preference dataset' : 'the SFT dataset';
  const mode = ctx.get('mode');
  if (mode === 'train') {
    const buf = ctx.get('buffer.trainer_input.experience_buffer');
    if (!buf || !buf.path) {
      ctx.report(
        'TRN206',
        `\`buffer.trainer_input.experience_buffer.path\` is required when \`algorithm.algorithm_type\` is \`${type}\`: point it at ${data}.`,
        'buffer.trainer_input.experience_buffer',
      );
    }
  } else if (mode === 'both' || mode === 'explore') {
    ctx.report(
      'TRN205',
      `${name} does not support \`${mode}\` mode: it trains offline on ${data}. Use \`mode: train\`.`,
      ctx.written('mode') ? 'mode' : 'algorithm.algorithm_type',
      {
        path: ['mode'],
        value: 'train',
      },
    );
  }
  if (ctx.get('synchronizer.sync_method') !== 'checkpoint') {
    ctx.force(
      'synchronizer.sync_method',
      'checkpoint',
      'TRN204',
      `${name} only supports checkpoint synchronization; \`synchronizer.sync_method\` becomes \`checkpoint\`.`,
      'algorithm.algorithm_type',
    );
  }
}

/** DPOAlgorithm.check_config: runs before the defaults are filled in. */
function checkDpo(ctx: CheckContext): void {
  checkOfflineAlgorithm(ctx, 'dpo');
  if (ctx.get('algorithm.repeat_times') !== 2)
    ctx.fill('algorithm.repeat_times', 2, 'DPO reads chosen and rejected as two samples of one task');
  const kl = ctx.get('algorithm.kl_loss_fn');
  if (kl === null || kl === undefined || kl === 'none') {
    ctx.set('algorithm.kl_loss_fn', 'k2', {
      code: 'TRN204',
      message: 'DPO must use a KL loss; `algorithm.kl_loss_fn` becomes `k2`.',
      severity: kl === 'none' ? 'warning' : 'information',
      at: ctx.written('algorithm.kl_loss_fn') ? 'algorithm.kl_loss_fn' : 'algorithm.algorithm_type',
    });
  }
}

/** From v0.4.0 `algorithm.loss_agg_mode` defaults to token-mean and overrides the policy loss's own setting. */
function checkLossAggMode(ctx: CheckContext): void {
  if (!atLeast(ctx.release, BASE_LOSS_AGG_MODE.since)) return;
  if (ctx.get('algorithm.loss_agg_mode') === null || ctx.get('algorithm.loss_agg_mode') === undefined) {
    ctx.fill('algorithm.loss_agg_mode', BASE_LOSS_AGG_MODE.value, 'the default loss aggregation');
  }
  const mode = ctx.get('algorithm.loss_agg_mode');
  const args = ctx.get('algorithm.policy_loss_fn_args');
  if (args && typeof args === 'object' && 'loss_agg_mode' in args && args.loss_agg_mode !== mode) {
    ctx.force(
      'algorithm.policy_loss_fn_args.loss_agg_mode',
      mode,
      'TRN207',
      `\`algorithm.loss_agg_mode\` (${mode}) overrides \`policy_loss_fn_args.loss_agg_mode\` (${args.loss_agg_mode}); set \`algorithm.loss_agg_mode\` instead.`,
      'algorithm.algorithm_type',
    );
  }
}

function checkOptimizer(ctx: CheckContext): void {
  if (!ctx.since('v0.5.0')) return;
  const style = ctx.get('algorithm.optimizer.warmup_style');
  if (style !== null && style !== undefined) {
    ctx.set('algorithm.optimizer.lr_scheduler_type', style, {
      code: 'TRN208',
      message: `\`warmup_style\` is deprecated; \`lr_scheduler_type\` is set to \`${style}\`. Write \`lr_scheduler_type: ${style}\` instead.`,
      at: 'algorithm.optimizer.warmup_style',
    });
  }
}
