/**
 * The service's HTTP routes (trinity/explorer/proxy/app.py; explorer/api/api.py up to v0.3.2, which has no
 * `/feedback` and `/commit`): request bodies parsed and checked with Trinity's status codes and messages, then
 * handed to the ExplorerService.
 */
import type { Reply, Route } from './http';
import { RequestError, completionBody, errorBody, parseChatRequest, streamChunks } from './openai';
import type { ExplorerService } from './service';

type Parsed = { ok: true; value: unknown } | { ok: false; message: string };

function parseJson(body: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch (e) {
    return { ok: false, message: `Invalid JSON: ${(e as Error).message}` };
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A Python number check: `isinstance(x, (int, float))` holds for booleans too. */
const pythonNumber = (v: unknown): number | undefined => (typeof v === 'number' ? v : typeof v === 'boolean' ? Number(v) : undefined);

async function chat(service: ExplorerService, body: string): Promise<Reply> {
  const parsed = parseJson(body);
  // FastAPI's HTTPException(400, detail=f"Invalid JSON: ...").
  if (!parsed.ok) return { status: 400, json: { detail: parsed.message } };
  try {
    const req = parseChatRequest(parsed.value);
    const out = await service.chat(req);
    return req.stream ? { status: 200, events: streamChunks(out.header, out.choices, req.includeUsage) } : { status: 200, json: completionBody(out.header, out.choices) };
  } catch (e) {
    if (e instanceof RequestError) return { status: e.status, json: errorBody(e) };
    throw e;
  }
}

function feedback(service: ExplorerService, body: string): Reply {
  const parsed = parseJson(body);
  // Trinity answers a body it cannot parse with a 500; here it is the client's error.
  if (!parsed.ok) return { status: 400, json: { error: parsed.message } };
  const b = parsed.value;
  if (!isObject(b)) return { status: 400, json: { error: 'the request body must be a JSON object' } };
  const reward = b.reward ?? null;
  const msgIds = b.msg_ids ?? null;
  if (msgIds === null || reward === null) return { status: 400, json: { error: 'msg_ids and reward are required' } };
  const value = pythonNumber(reward);
  if (!Array.isArray(msgIds) || value === undefined) return { status: 400, json: { error: 'msg_ids must be a list and reward must be a number' } };
  if (!msgIds.every((m) => typeof m === 'string' || typeof m === 'number')) return { status: 400, json: { error: 'msg_ids must be a list of message ids (the response ids)' } };
  const runId = b.run_id ?? 0;
  if (typeof runId !== 'number' || !Number.isInteger(runId)) return { status: 400, json: { error: 'run_id must be an integer' } };
  const taskId = b.task_id ?? null;
  if (taskId !== null && typeof taskId !== 'string' && typeof taskId !== 'number') return { status: 400, json: { error: 'task_id must be a string or a number' } };
  service.feedback(value, msgIds.map(String), { taskId, runId });
  return { status: 200, json: { status: 'success' } };
}

export function serviceRoutes(service: ExplorerService, startedAt: number): Route[] {
  const routes: Route[] = [
    { method: 'POST', path: '/v1/chat/completions', handle: (body) => chat(service, body) },
    { method: 'GET', path: '/v1/models', handle: () => ({ status: 200, json: service.models(startedAt) }) },
    { method: 'GET', path: '/health', handle: () => ({ status: 200, empty: true }) },
    { method: 'GET', path: '/metrics', handle: () => ({ status: 200, json: { ...service.collectMetrics(), explore_step_num: service.exploreStepNum } }) },
  ];
  if (service.flavor.feedback) {
    routes.push(
      { method: 'POST', path: '/feedback', handle: (body) => feedback(service, body) },
      {
        method: 'POST',
        path: '/commit',
        handle: async () => {
          await service.commit();
          return { status: 200, json: { status: 'success' } };
        },
      },
    );
  }
  return routes;
}
