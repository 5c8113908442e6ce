/** `_check_model` / `ModelConfigValidator`: critic path, external model, tinker, chat template, token lengths. */
import { algorithmTypeAt } from '../../model/algorithms';
import type { CheckContext } from '../check-context';
import type { ConfigPath } from '../../config-path';
import { candidatePaths } from '../runtime';

export function checkModel(ctx: CheckContext): void {
  if (!ctx.get('model.critic_model_path'))
    ctx.fill('model.critic_model_path', ctx.get('model.model_path'), 'the critic starts from `model.model_path`');
  if (ctx.since('v0.5.2')) checkExternalModel(ctx);
  if (ctx.since('v0.4.0') && ctx.get('model.tinker.enable') === true) checkTinker(ctx);
  if (ctx.since('v0.4.0')) checkChatTemplatePath(ctx);
  if (ctx.release === 'v0.3.0') checkLengthsV030(ctx);
  else checkLengths(ctx);
}

function checkExternalModel(ctx: CheckContext): void {
  if (ctx.get('model.external_model.enable') !== true) return;
  if (ctx.get('mode') !== 'bench') {
    ctx.report('TRN290', 'External model is only supported in `bench` mode.', 'model.external_model.enable');
  }
  ctx.fill('explorer.rollout_model.engine_type', 'external', 'an external model is served through the OpenAI API');
  for (const key of ['base_url_env', 'api_key_env', 'model_name'] as const) {
    if (!ctx.get(`model.external_model.${key}`)) {
      ctx.report(
        'TRN290',
        `\`model.external_model.${key}\` is required for external engine.`,
        `model.external_model.${key}`,
      );
    }
  }
}

function checkTinker(ctx: CheckContext): void {
  const type = String(ctx.get('algorithm.algorithm_type'));
  if (algorithmTypeAt(type, ctx.release)?.useCritic) {
    ctx.report(
      'TRN290',
      `Critic model is not supported when using tinker: \`${type}\` needs a critic.`,
      'model.tinker.enable',
    );
  }
  const entropy = ctx.get('algorithm.entropy_loss_fn');
  const coef = ctx.get('algorithm.entropy_loss_fn_args')?.entropy_coef ?? 0;
  if (entropy !== 'none' && coef !== 0) {
    ctx.report(
      'TRN261',
      'The entropy in the Tinker trainer is an estimate; set `entropy_coef` to 0.',
      ctx.written('algorithm.entropy_loss_fn_args') ? 'algorithm.entropy_loss_fn_args' : 'model.tinker.enable',
      undefined,
      'warning',
    );
  }
  const adjust = (path: ConfigPath, value: string, message: string) => {
    if (ctx.get(path) === value) return;
    ctx.force(path, value, 'TRN261', message, 'model.tinker.enable');
  };
  adjust(
    'explorer.rollout_model.engine_type',
    'tinker',
    'With tinker enabled, the rollout engine type becomes `tinker`.',
  );
  if (ctx.since('v0.5.0')) {
    const aux = (ctx.get('explorer.auxiliary_models') as unknown[] | undefined) ?? [];
    aux.forEach((_, i) =>
      adjust(
        `explorer.auxiliary_models.${i}.engine_type`,
        'tinker',
        'With tinker enabled, auxiliary engines become `tinker`.',
      ),
    );
  }
  adjust('trainer.trainer_type', 'tinker', 'With tinker enabled, the trainer type becomes `tinker`.');
  if (ctx.get('synchronizer.sync_method') === 'nccl') {
    adjust(
      'synchronizer.sync_method',
      'checkpoint',
      'Tinker does not support NCCL; `synchronizer.sync_method` becomes `checkpoint`.',
    );
  }
}

/** Trinity reads the template file into `custom_chat_template` (config_validator.py, f3c8dec), which the rollout model and the buffers' formats then take. */
function checkChatTemplatePath(ctx: CheckContext): void {
  const p = ctx.get('model.chat_template_path');
  if (typeof p !== 'string' || p === '' || ctx.get('model.custom_chat_template')) return;
  const exists = ctx.host.exists;
  if (!exists) return;
  const file = candidatePaths(ctx, p).find((c) => exists(c));
  if (!file) {
    ctx.report(
      'TRN304',
      `Failed to read chat template from \`${p}\`: the file does not exist.`,
      'model.chat_template_path',
    );
    return;
  }
  const text = ctx.host.readText?.(file);
  if (text !== undefined)
    ctx.fill('model.custom_chat_template', text, `read from \`model.chat_template_path\` (${file})`);
}

/** v0.3.0: lengths come from the model when `max_model_len` is unset; prompt and response default near it. */
function checkLengthsV030(ctx: CheckContext): void {
  const m = ctx.get('model.max_model_len');
  if (m === null || m === undefined) {
    ctx.report(
      'TRN211',
      '`model.max_model_len` is not set: Trinity reads it from the model (tokenizer and config) at launch, or uses 4096.',
      'model',
      undefined,
      'information',
    );
    return;
  }
  const p = ctx.get('model.max_prompt_tokens');
  if (p === null || p === undefined || p >= m) {
    ctx.set('model.max_prompt_tokens', m - 1, {
      code: 'TRN211',
      message: `\`max_prompt_tokens\` is set to ${m - 1}.`,
      at: p === null || p === undefined ? 'model.max_model_len' : 'model.max_prompt_tokens',
    });
  }
  const r = ctx.get('model.max_response_tokens');
  if (r === null || r === undefined || r > m) {
    ctx.set('model.max_response_tokens', m, {
      code: 'TRN211',
      message: `\`max_response_tokens\` is set to ${m}.`,
      at: r === null || r === undefined ? 'model.max_model_len' : 'model.max_response_tokens',
    });
  }
}

/** v0.3.1 onwards (`_check_model_len`). */
function checkLengths(ctx: CheckContext): void {
  let m = ctx.get('model.max_model_len');
  let p = ctx.get('model.max_prompt_tokens');
  let r = ctx.get('model.max_response_tokens');
  const set = (v: number | null | undefined): v is number => v !== null && v !== undefined;
  if (set(m) && set(p) && set(r) && p + r > m) {
    ctx.report(
      'TRN210',
      `\`max_prompt_tokens\` + \`max_response_tokens\` (${p} + ${r}) exceeds \`max_model_len\` (${m}). Lower one of them or raise \`max_model_len\` to ${p + r}.`,
      ctx.written('model.max_model_len') ? 'model.max_model_len' : 'model',
      { path: ['model', 'max_model_len'], value: p + r },
    );
    return;
  }
  if (!set(m)) {
    if (set(p) && set(r)) {
      m = p + r;
      ctx.set('model.max_model_len', m, {
        code: 'TRN211',
        message: `\`max_model_len\` is set to ${m} (${p} + ${r}) from \`max_prompt_tokens\` and \`max_response_tokens\`.`,
        at: 'model.max_response_tokens',
      });
    } else {
      ctx.report(
        'TRN212',
        'Unable to determine `max_model_len`: set `model.max_model_len`, or both `max_prompt_tokens` and `max_response_tokens`.',
        ctx.written('model') ? 'model' : 'model.model_path',
      );
      return;
    }
  }
  if (!set(p) && !set(r)) {
    p = Math.floor(m / 2);
    r = m - p;
    ctx.set('model.max_prompt_tokens', p, {
      code: 'TRN211',
      message: `\`max_prompt_tokens\` and \`max_response_tokens\` are not set; they become ${p} and ${r} (half of \`max_model_len\` each).`,
      at: 'model.max_model_len',
    });
    ctx.fill('model.max_response_tokens', r, 'the other half of `max_model_len`');
  } else if (!set(p)) {
    r = Math.min(r as number, m - 1);
    p = m - r;
    ctx.fill('model.max_response_tokens', r, '`max_response_tokens` capped below `max_model_len`');
    ctx.set('model.max_prompt_tokens', p, {
      code: 'TRN211',
      message: `\`max_prompt_tokens\` becomes ${p} (\`max_model_len\` ${m} − \`max_response_tokens\` ${r}).`,
      at: 'model.max_response_tokens',
    });
  } else if (!set(r)) {
    p = Math.min(p as number, m - 1);
    r = m - p;
    ctx.fill('model.max_prompt_tokens', p, '`max_prompt_tokens` capped below `max_model_len`');
    ctx.set('model.max_response_tokens', r, {
      code: 'TRN211',
      message: `\`max_response_tokens\` becomes ${r} (\`max_model_len\` ${m} − \`max_prompt_tokens\` ${p}).`,
      at: 'model.max_prompt_tokens',
    });
  }
  const min = ctx.get('model.min_response_tokens');
  if (typeof min === 'number' && min >= r) {
    const v = Math.max(r - 1, 0);
    ctx.set('model.min_response_tokens', v, {
      code: 'TRN213',
      message: `\`min_response_tokens\` (${min}) is not below \`max_response_tokens\` (${r}); it becomes ${v}.`,
      at: ctx.written('model.min_response_tokens') ? 'model.min_response_tokens' : 'model.max_response_tokens',
    });
  }
}
