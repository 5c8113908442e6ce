/**
 * `mode: serve` (trinity/cli/launcher.py `serve`, trinity/explorer/explorer.py `Explorer.serve`): the policy behind an
 * OpenAI-compatible HTTP service on `explorer.listen_address`:`explorer.proxy_port` (`explorer.api_port` up to
 * v0.3.2) for agent applications that run elsewhere. Responses are recorded as experiences; from v0.4.0 the agent
 * posts rewards to `/feedback` and sends the rewarded experiences to `buffer.trainer_input.experience_buffer` with
 * `/commit` (see serve/service.ts). A `mode: train` process of the same job that reads that buffer trains on them and
 * saves checkpoints; every `explorer.service_status_check_interval` seconds the service takes the job's newest
 * checkpoint (weights and model version), between requests. The run lasts until it is stopped (SIGTERM, the run's
 * abort signal): then the server closes, the buffer writer finishes (so the trainer ends once it has read the rest)
 * and the run ends as stopped.
 *
 * Safe by default: without a written `explorer.listen_address` the service binds 127.0.0.1 and ::1 only (Trinity's
 * default 0.0.0.0 suits its Ray cluster, not a laptop). Bound beyond loopback, every route but `/health` needs the
 * API key (serve/auth.ts), which goes to the URL file (mode 0600) and never to the logs.
 */
import { sleep } from '../../buffer/wait';
import type { HttpServer } from '../../serve/http';
import { listenForAgents } from '../../serve/listen';
import { startExplorerService, type ServedExplorer } from '../explorer-side/explorer-service';
import { ExplorerSide, stageSideSpec } from '../explorer-side/explorer-side';
import { RunSetupError, type StageContext, type StageResult } from '../stage/stage-context';

export async function runServe(ctx: StageContext): Promise<StageResult> {
  const { cfg } = ctx;
  const target = cfg.buffer.trainer_input.experience_buffer;
  if (!target)
    throw new RunSetupError('mode serve needs buffer.trainer_input.experience_buffer (where committed experiences go)');
  const side = await ExplorerSide.build(stageSideSpec(ctx, 'serve'), ctx.log);
  let served: ServedExplorer | undefined;
  let server: HttpServer | undefined;
  try {
    served = await startExplorerService(ctx, side, target);
    pullNewestCheckpoint(ctx, side); // the launcher's sync_weight before serving
    if (ctx.signal.aborted) return { evals: {}, stopped: true };
    server = await listenForAgents(served.service, served.flavor, {
      cfg,
      addressWritten: ctx.written('explorer.listen_address'),
      jobDir: ctx.jobDir,
      log: ctx.log,
    });
    await serveUntilStopped(ctx, server, served, side);
    return { evals: {}, stopped: ctx.signal.aborted };
  } finally {
    await server?.close();
    if (served?.service.pending) {
      ctx.log(
        'warning',
        served.flavor.feedback
          ? `${served.service.pending} rewarded experience(s) were never committed (POST /commit) and do not reach the trainer`
          : `${served.service.pending} experience(s) of the last interval do not reach the trainer`,
      );
    }
    await served?.close();
    side.dispose();
  }
}

/** Every `explorer.service_status_check_interval`, between requests: the newest checkpoint (and, up to v0.3.2, a commit). */
async function serveUntilStopped(
  ctx: StageContext,
  server: HttpServer,
  served: ServedExplorer,
  side: ExplorerSide,
): Promise<void> {
  const intervalMs = Math.max(ctx.cfg.explorer.service_status_check_interval, 0.05) * 1000;
  while (!ctx.signal.aborted) {
    try {
      await sleep(intervalMs, ctx.signal);
    } catch {
      break;
    }
    await server.exclusive(async () => {
      try {
        if (!served.flavor.feedback) await served.service.commit(); // up to v0.3.2 every interval is an explorer step
        pullNewestCheckpoint(ctx, side);
      } catch (e) {
        ctx.log('warning', `service status check: ${(e as Error).message}`);
      }
    });
  }
}

/**
 * The job's newest trainer checkpoint, when newer than the served weights (Explorer.serve's loop with the service's
 * model_weights_sync_loop).
 */
function pullNewestCheckpoint(ctx: StageContext, side: ExplorerSide): void {
  const step = side.pullNewerCheckpoint(ctx.jobDir, (m) => ctx.log('warning', m));
  if (step === undefined) return;
  ctx.log('info', `Updated latest model version to ${step}.`);
  ctx.log('info', `Model 0 synchronized to version ${step}.`);
}
