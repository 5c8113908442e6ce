/**
 * A small JSON-over-HTTP server on Node's `http` for the service's routes. Requests are handled one at a time, in
 * arrival order (generation is synchronous here; the queue also keeps a commit's buffer write from interleaving with
 * anything else). A handler's error becomes a 500 for that request only. Unknown paths get FastAPI's 404, a known
 * path with another method its 405. With `authorize`, every request but one to an `open` route is checked before
 * anything else (unknown paths included, so they reveal nothing). One handler serves every listen address.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a handler answers: JSON, an empty body, or server-sent events (each `data:` a JSON chunk, then `[DONE]`). */
export type Reply =
  | { status: number; json: unknown }
  | { status: number; empty: true }
  | { status: 200; events: unknown[] };

export interface Route {
  method: 'GET' | 'POST';
  path: string;
  handle: (body: string) => Reply | Promise<Reply>;
  /** Served without authorization (`/health`). */
  open?: true;
}

export interface ListenOptions {
  /** Listen addresses: the first must bind; the others bind the same port, or are skipped (`skipped`). */
  hosts: readonly string[];
  port: number;
  onError: (message: string) => void;
  /** Undefined when the request may pass, else the reply to answer it with. */
  authorize?: (authorization: string | undefined) => Reply | undefined;
}

export interface HttpServer {
  /** The bound addresses, as the sockets report them (the real port when 0 was asked for). */
  hosts: string[];
  port: number;
  /** Addresses after the first that could not be bound (e.g. ::1 without IPv6), and why. */
  skipped: { host: string; error: string }[];
  /** Runs `fn` in the request queue: after the request in flight, before the next. */
  exclusive<T>(fn: () => T | Promise<T>): Promise<T>;
  /** Stops accepting, drops idle connections, and waits for the request in flight. */
  close(): Promise<void>;
}

/** Request bodies longer than this are refused (413). */
const MAX_BODY_CHARS = 32 * 1024 * 1024;

class BodyTooLarge extends Error {}

/** The body as text (UTF-8, split characters joined across chunks). */
function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => {
      text += d;
      if (text.length > MAX_BODY_CHARS) {
        reject(new BodyTooLarge());
        req.destroy();
      }
    });
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, reply: Reply): void {
  if (res.destroyed) return;
  if ('events' in reply) {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    for (const e of reply.events) res.write(`data: ${JSON.stringify(e)}\n\n`);
    res.end('data: [DONE]\n\n');
  } else if ('empty' in reply) {
    res.writeHead(reply.status, { 'content-length': '0' });
    res.end();
  } else {
    const text = JSON.stringify(reply.json);
    res.writeHead(reply.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }
}

export async function startHttpServer(routes: readonly Route[], opts: ListenOptions): Promise<HttpServer> {
  const { onError, authorize } = opts;
  let queue: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(fn: () => T | Promise<T>): Promise<T> => {
    const run = queue.then(fn);
    queue = run.catch(() => {});
    return run;
  };

  let closing = false;
  const active = new Set<ServerResponse>();
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    if (closing) {
      req.resume();
      res.setHeader('connection', 'close');
      send(res, { status: 503, json: { detail: 'the service is shutting down' } });
      return;
    }
    active.add(res);
    res.on('close', () => active.delete(res));
    dispatchRequest(routes, { authorize, exclusive, onError }, req, res).catch((e: Error) => {
      onError(`${req.method} ${req.url}: ${e.message}`);
      if (!res.headersSent) send(res, { status: 500, json: { detail: 'Internal Server Error' } });
    });
  };
  const { servers, skipped, port } = await listenOnHosts(handler, opts);
  return {
    hosts: servers.map((s) => (s.address() as AddressInfo).address),
    port,
    skipped,
    exclusive,
    close: async () => {
      closing = true;
      const closed = Promise.all(servers.map((s) => new Promise<void>((done) => s.close(() => done()))));
      for (const s of servers) s.closeIdleConnections();
      // The request in flight (and any queued) is answered; a client still sending its body gets 2 s.
      await queue;
      const deadline = Date.now() + 2000;
      while (active.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      for (const s of servers) s.closeAllConnections();
      await closed;
    },
  };
}

/** How a request is answered: auth, routing, the body, then the route's handler in the one-at-a-time queue. */
async function dispatchRequest(
  routes: readonly Route[],
  host: {
    authorize: ListenOptions['authorize'];
    exclusive: <T>(fn: () => T | Promise<T>) => Promise<T>;
    onError: ListenOptions['onError'];
  },
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { authorize, exclusive, onError } = host;
  const path = (req.url ?? '/').split('?')[0];
  const onPath = routes.filter((r) => r.path === path);
  const route = onPath.find((r) => r.method === req.method);
  const denied = route?.open ? undefined : authorize?.(req.headers.authorization);
  if (denied) {
    req.resume();
    send(res, denied);
    return;
  }
  if (!route) {
    req.resume();
    send(
      res,
      onPath.length
        ? { status: 405, json: { detail: 'Method Not Allowed' } }
        : { status: 404, json: { detail: 'Not Found' } },
    );
    return;
  }
  let body: string;
  try {
    body = await readBody(req);
  } catch (e) {
    send(
      res,
      e instanceof BodyTooLarge
        ? { status: 413, json: { detail: `request body longer than ${MAX_BODY_CHARS} characters` } }
        : { status: 400, json: { detail: 'request body could not be read' } },
    );
    return;
  }
  let reply: Reply;
  try {
    reply = await exclusive(() => route.handle(body));
  } catch (e) {
    const message = `${req.method} ${path}: ${(e as Error).message}`;
    onError(message);
    reply = { status: 500, json: { error: { message, type: 'InternalServerError', param: null, code: 500 } } };
  }
  send(res, reply);
}

/** Listens on every host at one port (the first host's, when the port is 0); a later host that fails is skipped. */
async function listenOnHosts(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  opts: ListenOptions,
): Promise<{ servers: Server[]; skipped: { host: string; error: string }[]; port: number }> {
  const servers: Server[] = [];
  const skipped: { host: string; error: string }[] = [];
  let port = opts.port;
  try {
    for (const [i, host] of opts.hosts.entries()) {
      const server = createServer(handler);
      try {
        await listen(server, host, port);
      } catch (e) {
        if (i === 0) throw e;
        skipped.push({ host, error: (e as Error).message });
        continue;
      }
      server.on('error', (e) => opts.onError(`HTTP server: ${e.message}`));
      servers.push(server);
      port = (server.address() as AddressInfo).port;
    }
  } catch (e) {
    await Promise.all(servers.map((s) => new Promise((done) => s.close(done))));
    throw e;
  }
  return { servers, skipped, port };
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
