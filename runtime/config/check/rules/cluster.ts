/**
 * GPU arithmetic: how many GPUs the explorer takes and how many are left for the trainer, per release.
 * Trinity asks Ray for the cluster size when `cluster.node_num` / `gpu_per_node` are unset; a static check cannot,
 * so these rules run only when both are written (v0.3.0 has fixed defaults of 1 x 8).
 */
import type { CheckContext } from '../check-context';
import { configPath, type ConfigPath } from '../../config-path';

export interface GpuLayout {
  nodeNum: number;
  gpuPerNode: number;
}

/** The cluster size when it is known without asking Ray. */
export function knownCluster(ctx: CheckContext): GpuLayout | undefined {
  const n = ctx.get('cluster.node_num');
  const g = ctx.get('cluster.gpu_per_node');
  if (typeof n !== 'number' || typeof g !== 'number' || n <= 0 || g <= 0) return undefined;
  return { nodeNum: n, gpuPerNode: g };
}

interface EngineSizes {
  engine_type?: string;
  engine_num?: number;
  tensor_parallel_size?: number;
  data_parallel_size?: number;
  pipeline_parallel_size?: number;
}

/** GPUs of one engine: tensor parallel only up to v0.5.2; × data × pipeline parallel on main, none for tinker/external. */
export function gpuPerEngine(ctx: CheckContext, m: EngineSizes | undefined): number {
  if (!ctx.since('main')) return m?.tensor_parallel_size ?? 1;
  if (m?.engine_type === 'tinker' || m?.engine_type === 'external') return 0;
  return (m?.tensor_parallel_size ?? 1) * (m?.data_parallel_size ?? 1) * (m?.pipeline_parallel_size ?? 1);
}

function engineGpus(ctx: CheckContext, m: EngineSizes | undefined): number {
  return (m?.engine_num ?? 1) * gpuPerEngine(ctx, m);
}

function auxiliaryModels(ctx: CheckContext): EngineSizes[] {
  return (ctx.get('explorer.auxiliary_models') as EngineSizes[] | undefined) ?? [];
}

export function explorerGpus(ctx: CheckContext): { rollout: number; aux: number } {
  const rollout = engineGpus(ctx, ctx.get('explorer.rollout_model'));
  const aux = auxiliaryModels(ctx).reduce((s, m) => s + engineGpus(ctx, m), 0);
  return { rollout, aux };
}

/**
 * main `RayClusterConfigValidator._validate_multinode_inference_models` (f3c8dec): an engine larger than a node spans
 * whole nodes; vLLM has no data parallelism across nodes; SGLang needs tensor parallel divisible by data parallel.
 */
function checkInferenceEngineLayout(ctx: CheckContext, gpuPerNode: number): boolean {
  const before = ctx.diagnostics.length;
  const models: [EngineSizes | undefined, string][] = [
    [ctx.get('explorer.rollout_model'), 'explorer.rollout_model'],
    ...auxiliaryModels(ctx).map((m, i): [EngineSizes, string] => [m, `explorer.auxiliary_models.${i}`]),
  ];
  for (const [m, at] of models) {
    const type = m?.engine_type ?? 'vllm';
    if (type === 'tinker' || type === 'external') continue;
    const gpus = gpuPerEngine(ctx, m);
    const tp = m?.tensor_parallel_size ?? 1;
    const dp = m?.data_parallel_size ?? 1;
    const where = (key: string) => configPath(ctx.written(configPath(`${at}.${key}`)) ? `${at}.${key}` : at);
    let nnodes = 1;
    if (gpus > gpuPerNode) {
      if (gpus % gpuPerNode !== 0) {
        ctx.report(
          'TRN222',
          `Multi-node inference requires gpu_per_engine to be a multiple of cluster.gpu_per_node (${gpuPerNode}), but got gpu_per_engine=${gpus} (tensor × data × pipeline parallel size of \`${at}\`).`,
          where('tensor_parallel_size'),
        );
        continue;
      }
      nnodes = gpus / gpuPerNode;
    }
    if (type.startsWith('vllm')) {
      if (dp > 1 && nnodes > 1)
        ctx.report(
          'TRN222',
          `vLLM does not support data parallelism in multi-node setups: \`${at}\` needs ${nnodes} nodes with data_parallel_size ${dp}.`,
          where('data_parallel_size'),
        );
    } else if (type === 'sglang' && dp !== 0 && tp % dp !== 0) {
      ctx.report(
        'TRN222',
        `SGLang inference requires tensor_parallel_size to be a multiple of data_parallel_size, but got tensor_parallel_size=${tp} and data_parallel_size=${dp}.`,
        where('data_parallel_size'),
      );
    }
  }
  return ctx.diagnostics.length === before;
}

/** v0.5.0+ `RayClusterConfigValidator`: namespace, colocate switch (not emulated: needs Ray), GPU allocation. */
export function checkClusterV05(ctx: CheckContext): void {
  if (!ctx.get('ray_namespace')) {
    if (ctx.since('main'))
      ctx.fill(
        'ray_namespace',
        [ctx.get('project'), ctx.get('group'), ctx.get('name')].filter((p) => p).join('/'),
        'Trinity names the Ray namespace `<project>/<group>/<name>`, leaving out empty parts.',
      );
    else
      ctx.fill(
        'ray_namespace',
        `${ctx.get('project')}/${ctx.get('name')}`,
        'Trinity names the Ray namespace `<project>/<name>`.',
      );
  }
  if (ctx.get('model.tinker.enable') === true) return;
  if (!ctx.since('main') && ctx.get('model.external_model.enable') === true) return;
  const cluster = knownCluster(ctx);
  if (!cluster) {
    ctx.report(
      'TRN223',
      '`cluster.node_num` / `cluster.gpu_per_node` are not set: Trinity reads them from the running Ray cluster (and switches a 1-GPU cluster to `colocate` mode). GPU and batch-size checks need both set.',
      ctx.written('cluster') ? 'cluster' : 'mode',
    );
    return;
  }
  // Trinity raises on the first bad engine, before it splits the GPUs.
  if (ctx.since('main') && !checkInferenceEngineLayout(ctx, cluster.gpuPerNode)) return;
  if (ctx.get('explorer.rollout_model.engine_type') === 'external') return;
  const mode = ctx.get('mode');
  const { rollout, aux } = mode === 'train' ? { rollout: 0, aux: 0 } : explorerGpus(ctx);
  const total = cluster.nodeNum * cluster.gpuPerNode;
  const explorer = rollout + aux;
  ctx.fill(
    'cluster.rollout_gpu_num',
    rollout,
    ctx.since('main')
      ? 'engine_num × GPUs per engine (tensor × data × pipeline parallel) of the rollout model'
      : 'engine_num × tensor_parallel_size of the rollout model',
  );
  ctx.fill('cluster.auxiliary_model_gpu_num', aux, 'GPUs of the auxiliary models');
  ctx.fill('cluster.explorer_gpu_num', explorer, 'rollout + auxiliary model GPUs');
  ctx.fill('cluster.total_gpu_num', total, 'node_num × gpu_per_node');
  if (['explore', 'bench', 'serve'].includes(mode ?? '')) {
    if (explorer > total) {
      ctx.report(
        'TRN220',
        `Total GPU number (${total}) is less than the number of GPUs required for rollout (${explorer}).`,
        'explorer.rollout_model.engine_num',
      );
    }
    return;
  }
  if (mode === 'colocate') {
    checkColocate(ctx, total);
    return;
  }
  if (explorer >= total) {
    ctx.report(
      'TRN220',
      `Not enough GPUs for trainer. Explorer requires ${explorer} GPUs, but total available GPUs are ${total}. Lower \`explorer.rollout_model.engine_num\` or \`tensor_parallel_size\`, or add GPUs.`,
      ctx.written('explorer.rollout_model.engine_num') ? 'explorer.rollout_model.engine_num' : 'cluster',
    );
    return;
  }
  const trainer = total - explorer;
  ctx.set('cluster.trainer_gpu_num', trainer, {
    code: 'TRN223',
    message: `The trainer gets ${plural(trainer, 'GPU')} (${total} total − ${explorer} for the explorer).`,
    at: 'cluster',
  });
  if (trainer <= cluster.gpuPerNode) {
    ctx.fill('cluster.trainer_node_num', 1, 'the trainer fits on one node');
    ctx.fill('cluster.trainer_gpu_num_per_node', trainer, 'all trainer GPUs on one node');
  } else if (trainer % cluster.gpuPerNode !== 0) {
    ctx.report(
      'TRN222',
      `Trainer must use an integer number of nodes, but got trainer_gpu_num (${trainer}) with gpu_per_node (${cluster.gpuPerNode}). Please change \`engine_num\` or \`tensor_parallel_size\` in explorer config.`,
      'explorer.rollout_model.engine_num',
    );
  } else {
    ctx.fill('cluster.trainer_node_num', trainer / cluster.gpuPerNode, 'whole nodes for the trainer');
    ctx.fill('cluster.trainer_gpu_num_per_node', cluster.gpuPerNode, 'whole nodes for the trainer');
  }
}

function checkColocate(ctx: CheckContext, total: number): void {
  ctx.report('TRN224', '`colocate` is only for single GPU scenario.', 'mode', undefined, 'warning');
  const bad = (cond: boolean, msg: string, at: ConfigPath) => cond && ctx.report('TRN222', msg, at);
  bad(
    total !== 1,
    `Colocate mode requires exactly 1 GPU, but got ${total} GPUs. Please use \`both\` mode instead.`,
    'cluster',
  );
  bad(
    (ctx.get('explorer.rollout_model.engine_num') ?? 1) !== 1,
    'In colocate mode, `explorer.rollout_model.engine_num` must be set to 1.',
    'explorer.rollout_model.engine_num',
  );
  if (ctx.since('main'))
    bad(
      gpuPerEngine(ctx, ctx.get('explorer.rollout_model')) !== 1,
      'In colocate mode, `explorer.rollout_model.gpu_per_engine` must be set to 1 (tensor × data × pipeline parallel size).',
      'explorer.rollout_model.tensor_parallel_size',
    );
  else
    bad(
      (ctx.get('explorer.rollout_model.tensor_parallel_size') ?? 1) !== 1,
      'In colocate mode, `explorer.rollout_model.tensor_parallel_size` must be set to 1.',
      'explorer.rollout_model.tensor_parallel_size',
    );
  bad(
    ((ctx.get('explorer.auxiliary_models') as unknown[]) ?? []).length > 0,
    'In colocate mode, auxiliary models are not supported.',
    'explorer.auxiliary_models',
  );
  bad(
    (ctx.get('trainer.ulysses_sequence_parallel_size') ?? 1) > 1,
    'In colocate mode, `trainer.ulysses_sequence_parallel_size` must be set to 1.',
    'trainer.ulysses_sequence_parallel_size',
  );
  for (const k of ['explorer_gpu_num', 'trainer_gpu_num', 'trainer_node_num', 'trainer_gpu_num_per_node'] as const)
    ctx.fill(`cluster.${k}`, 1, 'colocate shares one GPU');
}

/** v0.4.0 `_check_explorer`: explorer GPUs must fit the cluster. */
export function checkExplorerGpusV04(ctx: CheckContext): void {
  if (ctx.get('explorer.rollout_model.engine_type') === 'tinker') return;
  const cluster = knownCluster(ctx);
  if (!cluster) return;
  const { rollout, aux } = explorerGpus(ctx);
  const need = rollout + aux;
  const total = cluster.nodeNum * cluster.gpuPerNode;
  const mode = ctx.get('mode');
  if (['explore', 'bench', 'serve'].includes(mode ?? '') && need > total) {
    ctx.report(
      'TRN220',
      `Total GPU number (${total}) is less than the number of GPUs required for rollout (${need}).`,
      'explorer.rollout_model.engine_num',
    );
  } else if (mode === 'both' && need >= total) {
    ctx.report(
      'TRN220',
      `Not enough GPUs for trainer in 'both' mode. Explorer requires ${need} GPUs, but total available GPUs are ${total}.`,
      ctx.written('explorer.rollout_model.engine_num') ? 'explorer.rollout_model.engine_num' : 'cluster',
    );
  }
}

/**
 * <= v0.4.0 `veRLConfig.synchronize_config`: the trainer's world size, and `train_batch_size` must divide by it.
 * Returns the world size, or undefined when it cannot be known statically.
 */
export function trainerWorldSizeV03(ctx: CheckContext): number | undefined {
  const cluster = knownCluster(ctx);
  if (!cluster) return undefined;
  const mode = ctx.get('mode');
  const { rollout, aux } = explorerGpus(ctx);
  const r = mode === 'both' ? rollout + aux : 0;
  const { nodeNum: n, gpuPerNode: g } = cluster;
  let nnodes: number;
  let perNode: number;
  if (n === 1) {
    nnodes = 1;
    perNode = g - r;
  } else if (!ctx.since('v0.4.0')) {
    if (r % g !== 0) {
      ctx.report(
        'TRN222',
        `rollout_gpu_num (${r}) must be divisible by \`gpu_per_node\` (${g}).`,
        'explorer.rollout_model.engine_num',
      );
      return undefined;
    }
    nnodes = n - Math.ceil(r / g);
    if (nnodes < 1) {
      ctx.report('TRN220', 'The number of training nodes must be greater than 0.', 'explorer.rollout_model.engine_num');
      return undefined;
    }
    perNode = g;
  } else {
    const t = n * g - r;
    if (t > g && t % g !== 0) {
      ctx.report(
        'TRN222',
        `Trainer must use an integer number of nodes, but got trainer_gpu_num (${t}) with gpu_per_node (${g}).`,
        'explorer.rollout_model.engine_num',
      );
      return undefined;
    }
    if (t <= 0) {
      ctx.report(
        'TRN220',
        `Not enough GPUs for training after allocating ${r} GPUs for explorer.`,
        'explorer.rollout_model.engine_num',
      );
      return undefined;
    }
    [nnodes, perNode] = t <= g ? [1, t] : [t / g, g];
  }
  const world = nnodes * perNode;
  ctx.fill('trainer.trainer_config.trainer.nnodes', nnodes, 'nodes left for the trainer');
  ctx.fill('trainer.trainer_config.trainer.n_gpus_per_node', perNode, 'trainer GPUs per node');
  if (world <= 0) {
    ctx.report(
      'TRN220',
      'The number of training gpus must be greater than 0, please check `engine_num` in explorer configs.',
      ctx.written('explorer.rollout_model.engine_num') ? 'explorer.rollout_model.engine_num' : 'cluster',
    );
    return undefined;
  }
  const why =
    r > 0
      ? `${n * g} total − ${r} for the explorer`
      : `all ${n * g} GPUs: the explorer does not run in \`${mode}\` mode`;
  ctx.report('TRN223', `The trainer gets ${plural(world, 'GPU')} (${why}).`, 'cluster', { value: world });
  return world;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
