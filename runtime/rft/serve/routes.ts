/**
 * The service's HTTP routes (trinity/explorer/proxy/app.py; explorer/api/api.py up to v0.3.2, which has no
 * `/feedback` and `/commit`): request bodies parsed and checked with Trinity's status codes and messages, then
 * handed to the ExplorerService.
 */
import type { Reply, Route } from './http';
import { RequestError, completionBody, errorBody, parseChatRequest, streamChunks } from './openai';
import { UnknownMessageIds } from './recorder';
import type { ExplorerService } from './service';

/** Bounds on feedback fields: a response id is `chatcmpl-` and 32 hex digits; a task id is the agent's own. */
export const FEEDBACK_LIMITS = { msgIds: 4096, idChars: 256 } as const;

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
const pythonNumber = (v: unknown): number | undefined =>
  typeof v === 'number' ? v : typeof v === 'boolean' ? Number(v) : undefined;

async function chat(service: ExplorerService, body: string): Promise<Reply> {
  const parsed = parseJson(body);
  // FastAPI's HTTPException(400, detail=f"Invalid JSON: ...").
  if (!parsed.ok) return { status: 400, json: { detail: parsed.message } };
  try {
    const req = parseChatRequest(parsed.value);
    const out = await service.chat(req);
    return req.stream
      ? { status: 200, events: streamChunks(out.header, out.choices, req.includeUsage) }
      : { status: 200, json: completionBody(out.header, out.choices) };
  } catch (e) {
    if (e instanceof RequestError) return { status: e.status, json: errorBody(e) };
    throw e;
  }
}

/**
 * `/feedback` with every field checked before anything is touched: types (Trinity's), lengths, and ids this service
 * served (an unknown one fails the whole request; the recorder checks it in the same transaction). Other fields are
 * ignored, as Trinity ignores them.
 */
function feedback(service: ExplorerService, body: string): Reply {
  const parsed = parseJson(body);
  // Trinity answers a body it cannot parse with a 500; here it is the client's error.
  if (!parsed.ok) return { status: 400, json: { error: parsed.message } };
  const b = parsed.value;
  if (!isObject(b)) return { status: 400, json: { error: 'the request body must be a JSON object' } };
  const reward = b.reward ?? null;
  const msgIds = b.msg_ids ?? null;
  const bad = (error: string): Reply => ({ status: 400, json: { error } });
  if (msgIds === null || reward === null) return bad('msg_ids and reward are required');
  const value = pythonNumber(reward);
  if (!Array.isArray(msgIds) || value === undefined) return bad('msg_ids must be a list and reward must be a number');
  // JSON.parse reads 1e999 as Infinity.
  if (!Number.isFinite(value)) return bad('reward must be a finite number');
  if (!msgIds.every((m) => typeof m === 'string' || (typeof m === 'number' && Number.isFinite(m))))
    return bad('msg_ids must be a list of message ids (the response ids)');
  if (msgIds.length > FEEDBACK_LIMITS.msgIds)
    return bad(`msg_ids may list at most ${FEEDBACK_LIMITS.msgIds} ids, got ${msgIds.length}`);
  const ids = msgIds.map(String);
  if (ids.some((m) => m.length === 0 || m.length > FEEDBACK_LIMITS.idChars))
    return bad(`each msg_id must be 1 to ${FEEDBACK_LIMITS.idChars} characters`);
  const runId = b.run_id ?? 0;
  if (typeof runId !== 'number' || !Number.isSafeInteger(runId) || runId < 0)
    return bad('run_id must be a non-negative integer');
  const taskId = b.task_id ?? null;
  if (taskId !== null && typeof taskId !== 'string' && !(typeof taskId === 'number' && Number.isFinite(taskId)))
    return bad('task_id must be a string or a number');
  if (typeof taskId === 'string' && taskId.length > FEEDBACK_LIMITS.idChars)
    return bad(`task_id must be at most ${FEEDBACK_LIMITS.idChars} characters`);
  try {
    service.feedback(value, ids, { taskId, runId });
  } catch (e) {
    if (e instanceof UnknownMessageIds) return bad(e.message);
    throw e;
  }
  return { status: 200, json: { status: 'success' } };
}

/** `/commit` takes no fields: an empty body or `{}`; anything else is refused before a commit happens. */
async function commit(service: ExplorerService, body: string): Promise<Reply> {
  if (body.trim() !== '') {
    const parsed = parseJson(body);
    if (!parsed.ok) return { status: 400, json: { error: parsed.message } };
    if (!isObject(parsed.value))
      return { status: 400, json: { error: 'the request body must be empty or a JSON object' } };
    const fields = Object.keys(parsed.value);
    if (fields.length)
      return {
        status: 400,
        json: {
          error: `commit takes no fields, got ${fields
            .slice(0, 5)
            .map((f) => JSON.stringify(f.slice(0, 64)))
            .join(', ')}`,
        },
      };
  }
  await service.commit();
  return { status: 200, json: { status: 'success' } };
}

export function serviceRoutes(service: ExplorerService, startedAt: number): Route[] {
  const routes: Route[] = [
    { method: 'POST', path: '/v1/chat/completions', handle: (body) => chat(service, body) },
    { method: 'GET', path: '/v1/models', handle: () => ({ status: 200, json: service.models(startedAt) }) },
    { method: 'GET', path: '/health', open: true, handle: () => ({ status: 200, empty: true }) },
    {
      method: 'GET',
      path: '/metrics',
      handle: () => ({ status: 200, json: { ...service.collectMetrics(), explore_step_num: service.exploreStepNum } }),
    },
  ];
  if (service.flavor.feedback) {
    routes.push(
      { method: 'POST', path: '/feedback', handle: (body) => feedback(service, body) },
      { method: 'POST', path: '/commit', handle: (body) => commit(service, body) },
    );
  }
  return routes;
}
