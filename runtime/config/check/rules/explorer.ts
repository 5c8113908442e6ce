/** The explorer section: rollout-model inheritance, auxiliary models, over-rollout, LoRA, concurrency, serve's address. */
import { isLoopbackAddress } from '../../runs/loopback';
import type { CheckContext } from '../check-context';
import { checkExplorerGpusV04 } from './cluster';

const INHERITED_V031 = [
  'model_path',
  'max_model_len',
  'max_prompt_tokens',
  'max_response_tokens',
  'min_response_tokens',
] as const;
const INHERITED_V032 = [...INHERITED_V031, 'temperature', 'top_p', 'top_k', 'logprobs'] as const;
const INHERITED_V04 = [
  'model_path',
  'temperature',
  'top_p',
  'top_k',
  'logprobs',
  'repetition_penalty',
  'max_model_len',
  'max_prompt_tokens',
  'max_response_tokens',
  'min_response_tokens',
  'enable_prompt_truncation',
  'rope_scaling',
  'rope_theta',
] as const;

export function checkExplorer(ctx: CheckContext): void {
  inheritRolloutModel(ctx);
  checkAuxiliaryModels(ctx);
  if (ctx.release === 'v0.4.0') checkExplorerGpusV04(ctx);
  if (ctx.since('v0.4.0')) checkOverRollout(ctx);
  checkLora(ctx);
  if (ctx.since('v0.5.0')) checkConcurrency(ctx);
  if (ctx.since('v0.3.1')) checkListenAddress(ctx);
}

/**
 * Not Trinity's check: the workbench binds loopback unless `listen_address` is written, so a written address
 * that reaches the network is the user's decision to expose the service, and worth saying what that exposes.
 */
function checkListenAddress(ctx: CheckContext): void {
  const key = 'explorer.listen_address';
  const address = ctx.get(key);
  if (ctx.get('mode') !== 'serve' || !ctx.written(key) || typeof address !== 'string' || isLoopbackAddress(address))
    return;
  const writes = ctx.since('v0.4.0')
    ? 'call the model and POST `/feedback` and `/commit`, which write rewarded experiences into the experience buffer a `train` process trains on'
    : 'call the model, and every response it serves is written into the experience buffer a `train` process trains on';
  ctx.report(
    'TRN263',
    `\`${key}\` \`${address}\` exposes the serve-mode service to the network: anyone who reaches this machine can ${writes}. ` +
      'The workbench requires `Authorization: Bearer <key>` on every route but `/health`: the key is `TRINITY_WORKBENCH_API_KEY`, else one generated at start and written with the URL to `<explorer.name>_server_url.txt` in the job directory (mode 0600); Trinity-RFT itself serves without a key. ' +
      `Remove \`listen_address\` to serve on 127.0.0.1 and ::1 only.`,
    key,
  );
}

function inheritRolloutModel(ctx: CheckContext): void {
  const rm = 'explorer.rollout_model';
  if (ctx.release === 'v0.3.0') {
    ctx.fill(`${rm}.model_path`, ctx.get('model.model_path'), 'the rollout model is `model.model_path`');
    for (const k of ['max_model_len', 'max_prompt_tokens', 'max_response_tokens'] as const) {
      if (ctx.get(`${rm}.${k}`) === null || ctx.get(`${rm}.${k}`) === undefined)
        ctx.fill(`${rm}.${k}`, ctx.get(`model.${k}`), `from \`model.${k}\``);
    }
    return;
  }
  if (!ctx.since('v0.4.0')) {
    // v0.3.1 / v0.3.2 overwrite what the user wrote under rollout_model.
    for (const k of ctx.since('v0.3.2') ? INHERITED_V032 : INHERITED_V031) {
      const from = ctx.get(`model.${k}`);
      if (ctx.written(`${rm}.${k}`) && ctx.get(`${rm}.${k}`) !== from) {
        ctx.set(`${rm}.${k}`, from, {
          code: 'TRN214',
          message: `\`${rm}.${k}\` is overwritten with \`model.${k}\` (${JSON.stringify(from)}) in Trinity ${ctx.release}; set \`model.${k}\` instead.`,
        });
      } else {
        ctx.fill(`${rm}.${k}`, from, `from \`model.${k}\``);
      }
    }
    return;
  }
  const keys = [...INHERITED_V04, ...(ctx.since('v0.5.2') ? (['enable_thinking'] as const) : [])];
  for (const k of keys) {
    if (ctx.get(`${rm}.${k}`) === null || ctx.get(`${rm}.${k}`) === undefined)
      ctx.fill(`${rm}.${k}`, ctx.get(`model.${k}`), `from \`model.${k}\``);
  }
  if (ctx.get(`${rm}.chat_template`) === null || ctx.get(`${rm}.chat_template`) === undefined) {
    ctx.fill(`${rm}.chat_template`, ctx.get('model.custom_chat_template'), 'from `model.custom_chat_template`');
  }
  if (ctx.get('mode') === 'colocate' && (ctx.get(`${rm}.gpu_memory_utilization`) ?? 0.9) > 0.25) {
    ctx.set(`${rm}.gpu_memory_utilization`, 0.25, {
      code: 'TRN261',
      message: 'In `colocate` mode, `explorer.rollout_model.gpu_memory_utilization` is set to 0.25.',
      at: ctx.written(`${rm}.gpu_memory_utilization`) ? `${rm}.gpu_memory_utilization` : 'mode',
    });
  }
  if (ctx.get('mode') === 'serve') ctx.fill(`${rm}.enable_openai_api`, true, 'serve mode exposes the OpenAI API');
}

function checkAuxiliaryModels(ctx: CheckContext): void {
  if (ctx.release === 'v0.3.0') return;
  const aux = (ctx.get('explorer.auxiliary_models') as Record<string, unknown>[] | undefined) ?? [];
  aux.forEach((m, i) => {
    if (!m.model_path) {
      ctx.report(
        'TRN260',
        "auxiliary model's model_path is required.",
        ctx.written(`explorer.auxiliary_models.${i}`) ? `explorer.auxiliary_models.${i}` : 'explorer.auxiliary_models',
      );
    }
  });
}

function checkOverRollout(ctx: CheckContext): void {
  const ratio = ctx.get('explorer.over_rollout.ratio') ?? 0;
  const partial = ctx.release === 'main' && ctx.get('explorer.over_rollout.return_partial_tasks') === true;
  if (!(ratio > 0) && !partial) return;
  if (!(ratio >= 0 && ratio < 1)) {
    ctx.report('TRN260', 'over_rollout_ratio should be in [0.0, 1.0).', 'explorer.over_rollout.ratio');
  }
  if (ctx.get('synchronizer.sync_style') === 'fixed') {
    const styles = ctx.since('v0.5.0')
      ? '`explorer_driven` or `trainer_driven`'
      : '`dynamic_by_explorer` or `dynamic_by_trainer`';
    const what = ctx.release === 'main' ? 'over_rollout' : 'over_rollout_ratio';
    ctx.report(
      'TRN260',
      `${what} is not compatible with fixed sync_style, please set \`synchronizer.sync_style\` to ${styles}.`,
      ctx.written('synchronizer.sync_style') ? 'synchronizer.sync_style' : 'explorer.over_rollout',
    );
  }
}

function checkLora(ctx: CheckContext): void {
  const loras = ctx.get('model.lora_configs');
  if (!Array.isArray(loras) || (ctx.since('v0.4.0') && ctx.get('model.tinker.enable') === true)) return;
  ctx.fill('explorer.rollout_model.enable_lora', true, 'LoRA adapters are configured');
  if (loras.length > 1) {
    ctx.report('TRN262', 'Only one lora adapter is supported for now.', 'model.lora_configs.1');
    return;
  }
  if (loras[0] && (loras[0].path === null || loras[0].path === undefined)) {
    const path = `${ctx.get('checkpoint_job_dir')}/dummy_lora`;
    ctx.set('model.lora_configs.0.path', path, {
      code: 'TRN262',
      message: `No LoRA \`path\`: Trinity builds a dummy adapter at \`${path}\` at launch (it loads the base model's config to do so).`,
      severity: 'information',
      at: 'model.lora_configs.0',
    });
    if (ctx.since('v0.5.0'))
      ctx.fill('model.lora_configs.0.is_dummy', true, 'Trinity built the adapter at `path` itself');
  }
}

function checkConcurrency(ctx: CheckContext): void {
  const mode = ctx.get('explorer.concurrent_mode');
  const valid = ['sequential', 'asynchronous', 'multi-threading'];
  if (!valid.includes(mode ?? '')) {
    ctx.report(
      'TRN260',
      `Invalid explorer.concurrent_mode: \`${mode}\`; expected one of ${valid.join(', ')}.`,
      'explorer.concurrent_mode',
      { candidates: valid },
    );
    return;
  }
  if (mode === 'sequential') return;
  const batch = ctx.get('buffer.batch_size') ?? 1;
  const engines = ctx.get('explorer.rollout_model.engine_num') ?? 1;
  const max = Math.ceil(batch / engines);
  const runners = ctx.get('explorer.runner_per_model');
  if (Number(runners) > max) {
    ctx.set('explorer.runner_per_model', max, {
      code: 'TRN261',
      message: `explorer.runner_per_model (${runners}) is too large for concurrent_mode '${mode}' with batch_size (${batch}) and rollout_model.engine_num (${engines}). It is set to ${max}.`,
      at: ctx.written('explorer.runner_per_model') ? 'explorer.runner_per_model' : 'explorer.concurrent_mode',
    });
  }
}
