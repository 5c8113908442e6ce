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
import { rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join, resolve } from 'node:path';
import { openExperienceWriter, type ExperienceWriter } from '../../buffer';
import { sleep } from '../../buffer/wait';
import { applyNewerCheckpoint } from '../../checkpoint/checkpoints';
import { isLoopbackAddress } from '../../../config/runs/loopback';
import { API_KEY_ENV, bearerAuth, generateApiKey } from '../../serve/auth';
import { startHttpServer, type HttpServer } from '../../serve/http';
import { HistoryRecorder } from '../../serve/recorder';
import { serviceRoutes } from '../../serve/routes';
import { ExplorerService, serviceFlavor, type ServiceFlavor } from '../../serve/service';
import type { StageContext, StageResult } from '../stage/stage-context';
import {
  RunSetupError,
  algorithmSetup,
  experiencePipeline,
  loadModelFor,
  rolloutModel,
  withAbsolutePath,
} from '../setup';

export async function runServe(ctx: StageContext): Promise<StageResult> {
  const { cfg } = ctx;
  const flavor = serviceFlavor(ctx.release);
  const source = cfg.buffer.trainer_input.experience_buffer;
  if (!source)
    throw new RunSetupError('mode serve needs buffer.trainer_input.experience_buffer (where committed experiences go)');
  const pipeline = experiencePipeline(cfg, algorithmSetup(cfg, ctx.release).groupAdvantage, ctx.release);
  const policy = loadModelFor(cfg, ctx.configDir, ctx.modelPath);
  let writer: ExperienceWriter | undefined;
  let recorder: HistoryRecorder | undefined;
  let server: HttpServer | undefined;
  let service: ExplorerService | undefined;
  try {
    const keyPath = 'buffer.trainer_input.experience_buffer';
    writer = openExperienceWriter(withAbsolutePath(source, ctx.configDir), { keyPath });
    if (flavor.feedback) {
      const key = cfg.explorer.db_url ? 'explorer.db_url' : 'buffer.cache_dir';
      recorder = new HistoryRecorder(historyDbUrl(cfg.explorer.db_url, cfg.buffer.cache_dir, ctx), key);
    }
    const maxPositions = policy.model.config.maxPositions;
    service = new ExplorerService({
      flavor,
      rollout: rolloutModel(cfg, policy, ctx.seed),
      servedModel: ctx.modelPath ?? cfg.model.model_path,
      maxModelLen: Math.min(cfg.model.max_model_len ?? maxPositions, maxPositions),
      maxResponseTokens: cfg.model.max_response_tokens ?? maxPositions,
      temperature: cfg.model.temperature ?? 1,
      pipeline,
      writer,
      recorder,
      monitor: ctx.monitor,
    });
    pullNewestCheckpoint(ctx, service); // the launcher's sync_weight before serving
    if (ctx.signal.aborted) return { evals: {}, stopped: true };
    server = await listen(ctx, service, flavor);
    await serveUntilStopped(ctx, server, service, flavor);
    return { evals: {}, stopped: ctx.signal.aborted };
  } finally {
    await server?.close();
    if (service?.pending) {
      ctx.log(
        'warning',
        flavor.feedback
          ? `${service.pending} rewarded experience(s) were never committed (POST /commit) and do not reach the trainer`
          : `${service.pending} experience(s) of the last interval do not reach the trainer`,
      );
    }
    await writer?.finish();
    await recorder?.close();
    policy.model.dispose();
  }
}

/** Binds the service (loopback only unless `explorer.listen_address` is written), says where, writes the URL file. */
async function listen(ctx: StageContext, service: ExplorerService, flavor: ServiceFlavor): Promise<HttpServer> {
  const { cfg } = ctx;
  const written = ctx.written('explorer.listen_address');
  const hosts = written ? [cfg.explorer.listen_address] : ['127.0.0.1', '::1'];
  const exposed = hosts.some((h) => !isLoopbackAddress(h));
  const envKey = process.env[API_KEY_ENV];
  const apiKey = exposed ? envKey || generateApiKey() : undefined;
  const urlFile = join(ctx.jobDir, `${cfg.explorer.name}_server_url.txt`);
  const portKey = flavor.feedback ? 'explorer.proxy_port' : 'explorer.api_port';
  const port = flavor.feedback
    ? cfg.explorer.proxy_port
    : ((cfg.explorer as unknown as { api_port?: number }).api_port ?? 8010);
  let server: HttpServer;
  try {
    server = await startHttpServer(serviceRoutes(service, Math.floor(Date.now() / 1000)), {
      hosts,
      port,
      onError: (m) => ctx.log('error', m),
      authorize: apiKey ? bearerAuth(apiKey, envKey ? `the value of ${API_KEY_ENV}` : `in ${urlFile}`) : undefined,
    });
  } catch (e) {
    throw new RunSetupError(
      `cannot listen on ${hosts[0]}:${port} (explorer.listen_address, ${portKey}): ${(e as Error).message}`,
    );
  }
  const url = `http://${advertisedHost(server.hosts[0])}:${server.port}`;
  ctx.log(
    'info',
    flavor.feedback
      ? `Starting Trinity Service on ${url}`
      : `Explorer API Server is started on ${url} and listening to ${hosts[0]}.`,
  );
  const bound = server.hosts.map((h) => `${h.includes(':') ? `[${h}]` : h}:${server.port}`).join(' and ');
  if (!written) {
    ctx.log(
      'info',
      `listening on ${bound} only: the service is local to this machine (explorer.listen_address is not written; Trinity's default is 0.0.0.0). To serve other machines, write explorer.listen_address (e.g. 0.0.0.0); clients then need the API key.`,
    );
  } else if (apiKey) {
    const from = envKey ? `from ${API_KEY_ENV}` : `generated for this run and saved in ${urlFile}`;
    ctx.log(
      'warning',
      `listening on ${bound}, reachable from the network: every route but /health needs Authorization: Bearer <key> (the key is ${from})`,
    );
  } else {
    ctx.log('info', `listening on ${bound}`);
  }
  for (const s of server.skipped) ctx.log('info', `not listening on ${s.host}: ${s.error}`);
  ctx.log(
    'info',
    'requests are served one at a time: generation is synchronous in this runtime, and new weights are taken between requests',
  );
  if (cfg.explorer.rollout_model.engine_num > 1) {
    ctx.log(
      'info',
      `explorer.rollout_model.engine_num is ${cfg.explorer.rollout_model.engine_num}: one local model serves every request`,
    );
  }
  writeUrlFile(urlFile, url, envKey ? undefined : apiKey);
  ctx.log('info', `Saved explorer server URL to ${urlFile}`);
  return server;
}

/** Every `explorer.service_status_check_interval`, between requests: the newest checkpoint (and, up to v0.3.2, a commit). */
async function serveUntilStopped(
  ctx: StageContext,
  server: HttpServer,
  service: ExplorerService,
  flavor: ServiceFlavor,
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
        if (!flavor.feedback) await service.commit(); // up to v0.3.2 every interval is an explorer step
        pullNewestCheckpoint(ctx, service);
      } catch (e) {
        ctx.log('warning', `service status check: ${(e as Error).message}`);
      }
    });
  }
}

/**
 * The URL (Trinity's file), then, when the key was generated, the header clients send. Created afresh with mode 0600
 * so an older file's looser mode never holds the key.
 */
function writeUrlFile(file: string, url: string, generatedKey: string | undefined): void {
  rmSync(file, { force: true });
  writeFileSync(file, generatedKey ? `${url}\nAuthorization: Bearer ${generatedKey}\n` : url, {
    mode: 0o600,
    flag: 'wx',
  });
}

/**
 * The job's newest trainer checkpoint, when newer than the served weights (Explorer.serve's loop with the service's
 * model_weights_sync_loop).
 */
function pullNewestCheckpoint(ctx: StageContext, service: ExplorerService): void {
  const step = applyNewerCheckpoint(
    ctx.jobDir,
    service.modelVersion,
    (saved, at) => service.setWeights(saved, at),
    (m) => ctx.log('warning', m),
  );
  if (step === undefined) return;
  ctx.log('info', `Updated latest model version to ${step}.`);
  ctx.log('info', `Model 0 synchronized to version ${step}.`);
}

/** `explorer.db_url`, else Trinity's `sqlite:///<buffer.cache_dir>/proxy_history.db`. */
function historyDbUrl(dbUrl: string | null, cacheDir: string | null, ctx: StageContext): string {
  if (dbUrl) return withAbsolutePath({ path: dbUrl }, ctx.configDir).path;
  const dir = cacheDir ? resolve(cacheDir) : join(ctx.jobDir, 'buffer');
  return `sqlite:///${join(dir, 'proxy_history.db')}`;
}

/** The address clients use: a wildcard listen address is reached at this machine's address (Trinity logs the node IP). */
function advertisedHost(bound: string): string {
  if (bound === '0.0.0.0' || bound === '::') {
    for (const list of Object.values(networkInterfaces())) {
      const v4 = list?.find((a) => a.family === 'IPv4' && !a.internal);
      if (v4) return v4.address;
    }
    return '127.0.0.1';
  }
  return bound.includes(':') ? `[${bound}]` : bound;
}
