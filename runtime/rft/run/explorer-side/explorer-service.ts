/**
 * Serve mode's explorer: the OpenAI-compatible service (serve/service.ts) over the explorer side's rollout model and
 * experience pipeline, committing experiences to the trainer's buffer and, from v0.4.0, recording every response in
 * Trinity's proxy_history table until the agent's feedback rewards it.
 */
import { join, resolve } from 'node:path';
import type { ExperienceBufferConfig } from '../../../config/types.generated';
import { openExperienceWriter, type ExperienceWriter } from '../../buffer';
import { HistoryRecorder } from '../../serve/recorder';
import { ExplorerService, serviceFlavor, type ServiceFlavor } from '../../serve/service';
import { EXPERIENCE_BUFFER_KEY } from '../exchange/experience-channel';
import { withAbsolutePath } from '../stage/config-paths';
import type { StageContext } from '../stage/stage-context';
import type { ExplorerSide } from './explorer-side';

export interface ServedExplorer {
  service: ExplorerService;
  /** What the config's release's service does (feedback and commit from v0.4.0, streaming from v0.5.2). */
  flavor: ServiceFlavor;
  /** Finishes the buffer writer (the trainer then ends once it has read the rest) and closes the recorder. */
  close(): Promise<void>;
}

/** The service over `side` (built for `serve`), writing to `target`, the experience buffer's section. */
export async function startExplorerService(
  ctx: StageContext,
  side: ExplorerSide,
  target: ExperienceBufferConfig,
): Promise<ServedExplorer> {
  const { cfg } = ctx;
  const flavor = serviceFlavor(ctx.release);
  const writer: ExperienceWriter = openExperienceWriter(withAbsolutePath(target, ctx.configDir), {
    keyPath: EXPERIENCE_BUFFER_KEY,
  });
  let recorder: HistoryRecorder | undefined;
  try {
    if (flavor.feedback) {
      const key = cfg.explorer.db_url ? 'explorer.db_url' : 'buffer.cache_dir';
      recorder = new HistoryRecorder(historyDbUrl(ctx), key);
    }
    const maxPositions = side.weights.model.config.maxPositions;
    const service = new ExplorerService({
      flavor,
      rollout: side.rollout,
      stop: side.stop,
      servedModel: ctx.modelPath ?? cfg.model.model_path,
      maxModelLen: Math.min(cfg.model.max_model_len ?? maxPositions, maxPositions),
      maxResponseTokens: cfg.model.max_response_tokens ?? maxPositions,
      // `model.temperature` is new in v0.3.2 (v0.3.1's API server samples at vLLM's default).
      temperature: cfg.model.temperature ?? 1,
      pipeline: side.pipeline,
      writer,
      recorder,
      monitor: ctx.monitor,
    });
    return {
      service,
      flavor,
      close: async () => {
        await writer.finish();
        await recorder?.close();
      },
    };
  } catch (e) {
    await writer.finish();
    await recorder?.close();
    throw e;
  }
}

/** `explorer.db_url`, else Trinity's `sqlite:///<buffer.cache_dir>/proxy_history.db`. */
function historyDbUrl(ctx: StageContext): string {
  const { db_url: dbUrl } = ctx.cfg.explorer;
  if (dbUrl) return withAbsolutePath({ path: dbUrl }, ctx.configDir).path;
  const cacheDir = ctx.cfg.buffer.cache_dir;
  const dir = cacheDir ? resolve(cacheDir) : join(ctx.jobDir, 'buffer');
  return `sqlite:///${join(dir, 'proxy_history.db')}`;
}
