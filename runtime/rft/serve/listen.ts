/**
 * Where serve mode's service listens and how agents find it: loopback only unless `explorer.listen_address` is
 * written (Trinity's default 0.0.0.0 suits its Ray cluster, not a laptop); bound beyond loopback, every route but
 * `/health` needs the API key (auth.ts), which goes to the URL file (mode 0600, Trinity's
 * `<explorer.name>_server_url.txt` in the job directory) and never to the logs.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../../config/types.generated';
import { isLoopbackAddress } from '../../config/runs/loopback';
import type { RunLog } from '../monitor/run-log';
import { API_KEY_ENV, bearerAuth, generateApiKey } from './auth';
import { startHttpServer, type HttpServer } from './http';
import { serviceRoutes } from './routes';
import type { ExplorerService, ServiceFlavor } from './service';

export interface ListenSettings {
  cfg: Config;
  /** Whether the user wrote `explorer.listen_address` (the resolved config always holds Trinity's default). */
  addressWritten: boolean;
  /** Where the URL file goes. */
  jobDir: string;
  log: RunLog;
}

/** The service cannot listen where the config says (the address or port is taken or not this machine's). */
export class ListenError extends Error {}

/** Binds the service (loopback only unless `explorer.listen_address` is written), says where, writes the URL file. */
export async function listenForAgents(
  service: ExplorerService,
  flavor: ServiceFlavor,
  where: ListenSettings,
): Promise<HttpServer> {
  const { cfg, log } = where;
  const written = where.addressWritten;
  const hosts = written ? [cfg.explorer.listen_address] : ['127.0.0.1', '::1'];
  const exposed = hosts.some((h) => !isLoopbackAddress(h));
  const envKey = process.env[API_KEY_ENV];
  const apiKey = exposed ? envKey || generateApiKey() : undefined;
  const urlFile = join(where.jobDir, `${cfg.explorer.name}_server_url.txt`);
  const portKey = flavor.feedback ? 'explorer.proxy_port' : 'explorer.api_port';
  const port = flavor.feedback
    ? cfg.explorer.proxy_port
    : ((cfg.explorer as unknown as { api_port?: number }).api_port ?? 8010);
  let server: HttpServer;
  try {
    server = await startHttpServer(serviceRoutes(service, Math.floor(Date.now() / 1000)), {
      hosts,
      port,
      onError: (m) => log('error', m),
      authorize: apiKey ? bearerAuth(apiKey, envKey ? `the value of ${API_KEY_ENV}` : `in ${urlFile}`) : undefined,
    });
  } catch (e) {
    throw new ListenError(
      `cannot listen on ${hosts[0]}:${port} (explorer.listen_address, ${portKey}): ${(e as Error).message}`,
    );
  }
  const url = `http://${advertisedHost(server.hosts[0])}:${server.port}`;
  log(
    'info',
    flavor.feedback
      ? `Starting Trinity Service on ${url}`
      : `Explorer API Server is started on ${url} and listening to ${hosts[0]}.`,
  );
  const bound = server.hosts.map((h) => `${h.includes(':') ? `[${h}]` : h}:${server.port}`).join(' and ');
  if (!written) {
    log(
      'info',
      `listening on ${bound} only: the service is local to this machine (explorer.listen_address is not written; Trinity's default is 0.0.0.0). To serve other machines, write explorer.listen_address (e.g. 0.0.0.0); clients then need the API key.`,
    );
  } else if (apiKey) {
    const from = envKey ? `from ${API_KEY_ENV}` : `generated for this run and saved in ${urlFile}`;
    log(
      'warning',
      `listening on ${bound}, reachable from the network: every route but /health needs Authorization: Bearer <key> (the key is ${from})`,
    );
  } else {
    log('info', `listening on ${bound}`);
  }
  for (const s of server.skipped) log('info', `not listening on ${s.host}: ${s.error}`);
  log(
    'info',
    'requests are served one at a time: generation is synchronous in this runtime, and new weights are taken between requests',
  );
  if (cfg.explorer.rollout_model.engine_num > 1) {
    log(
      'info',
      `explorer.rollout_model.engine_num is ${cfg.explorer.rollout_model.engine_num}: one local model serves every request`,
    );
  }
  writeUrlFile(urlFile, url, envKey ? undefined : apiKey);
  log('info', `Saved explorer server URL to ${urlFile}`);
  return server;
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
