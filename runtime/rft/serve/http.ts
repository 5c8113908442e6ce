/**
 * A small JSON-over-HTTP server on Node's `http` for the service's routes. Requests are handled one at a time, in
 * arrival order (generation is synchronous here; the queue also keeps a commit's buffer write from interleaving with
 * anything else). A handler's error becomes a 500 for that request only. Unknown paths get FastAPI's 404, a known
 * path with another method its 405.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a handler answers: JSON, an empty body, or server-sent events (each `data:` a JSON chunk, then `[DONE]`). */
export type Reply = { status: number; json: unknown } | { status: number; empty: true } | { status: 200; events: unknown[] };

export interface Route {
  method: 'GET' | 'POST';
  path: string;
  handle: (body: string) => Reply | Promise<Reply>;
}

export interface HttpServer {
  /** The bound address (the real port when 0 was asked for). */
  host: string;
  port: number;
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

export function startHttpServer(routes: readonly Route[], host: string, port: number, onError: (message: string) => void): Promise<HttpServer> {
  let queue: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(fn: () => T | Promise<T>): Promise<T> => {
    const run = queue.then(fn);
    queue = run.catch(() => {});
    return run;
  };

  const dispatch = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0];
    const onPath = routes.filter((r) => r.path === path);
    const route = onPath.find((r) => r.method === req.method);
    if (!route) {
      req.resume();
      send(res, onPath.length ? { status: 405, json: { detail: 'Method Not Allowed' } } : { status: 404, json: { detail: 'Not Found' } });
      return;
    }
    let body: string;
    try {
      body = await readBody(req);
    } catch (e) {
      send(res, e instanceof BodyTooLarge ? { status: 413, json: { detail: `request body longer than ${MAX_BODY_CHARS} characters` } } : { status: 400, json: { detail: 'request body could not be read' } });
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
  };

  let closing = false;
  const active = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    if (closing) {
      req.resume();
      res.setHeader('connection', 'close');
      send(res, { status: 503, json: { detail: 'the service is shutting down' } });
      return;
    }
    active.add(res);
    res.on('close', () => active.delete(res));
    dispatch(req, res).catch((e: Error) => {
      onError(`${req.method} ${req.url}: ${e.message}`);
      if (!res.headersSent) send(res, { status: 500, json: { detail: 'Internal Server Error' } });
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      server.on('error', (e) => onError(`HTTP server: ${e.message}`));
      const addr = server.address() as AddressInfo;
      resolve({
        host: addr.address,
        port: addr.port,
        exclusive,
        close: async () => {
          closing = true;
          const closed = new Promise<void>((done) => server.close(() => done()));
          server.closeIdleConnections();
          // The request in flight (and any queued) is answered; a client still sending its body gets 2 s.
          await queue;
          const deadline = Date.now() + 2000;
          while (active.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
          server.closeAllConnections();
          await closed;
        },
      });
    });
  });
}
