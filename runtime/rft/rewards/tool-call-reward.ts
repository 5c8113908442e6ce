/**
 * `tool_call_workflow`'s reward, Trinity's `compute_toolcall_reward` (Tool-N1's `compute_score_v0`):
 * trinity/common/workflows/customized_toolcall_workflows.py, modelscope/Trinity-RFT @7f9b280 (the same rules on
 * agentscope-ai/Trinity-RFT main, where the registry names it `tool_call_workflow`). 1 when the response thinks once
 * (<think>…</think> before any <tool_call>) and its last <tool_call> block holds the same multiset of
 * (name, arguments) calls as the task's `answer`; else 0. Where Python raises (a tool call block that loads as a
 * number, an answer call without "name"), this throws, so the task fails as it does on Trinity.
 */
import { isPyJsonObject, pyJsonDumps, pyJsonLoads, PyJsonError, PyJsonFloat, type PyJson } from './python-json';

export class ToolCallRewardError extends Error {}

/** `extract_solution_v0`: the last <tool_call>…</tool_call> (across lines), stripped and loaded, else null. */
function lastToolCall(response: string): PyJson | undefined {
  const matches = [...response.matchAll(/<tool_call>([\s\S]*?)<\/tool_call>/g)];
  if (!matches.length) return undefined;
  return loadsOrUndefined(matches[matches.length - 1][1].trim());
}

function loadsOrUndefined(text: string): PyJson | undefined {
  try {
    return pyJsonLoads(text);
  } catch (e) {
    if (e instanceof PyJsonError) return undefined;
    throw e;
  }
}

/** Python's `len()` and iteration of a loaded value; numbers and booleans have neither (TypeError). */
function items(v: PyJson, what: string): PyJson[] {
  if (Array.isArray(v)) return v;
  if (typeof v === 'string') return [...v];
  if (isPyJsonObject(v)) return [...v.keys()];
  throw new ToolCallRewardError(`tool_call_workflow: ${what} is ${pyJsonDumps(v)}, which Python cannot iterate`);
}

/** A dict key as Python hashes it (1, 1.0 and True are one key); lists and dicts are unhashable. */
function hashKey(v: PyJson): string | undefined {
  if (typeof v === 'string') return `s${v}`;
  if (v === null) return 'None';
  if (typeof v === 'boolean') return `n${Number(v)}`;
  if (typeof v === 'bigint') return `n${v}`;
  if (v instanceof PyJsonFloat) return Number.isInteger(v.value) ? `n${BigInt(v.value)}` : `f${v.value}`;
  return undefined;
}

/**
 * `Counter((item["name"], json.dumps(item["arguments"], sort_keys=True)) for item in calls)`; undefined where
 * Python's TypeError is caught (an item that is not a dict, an unhashable name).
 */
function callCounter(calls: PyJson[], what: string): Map<string, number> | undefined {
  const out = new Map<string, number>();
  for (const item of calls) {
    if (!isPyJsonObject(item)) return undefined;
    for (const k of ['name', 'arguments'])
      if (!item.has(k)) throw new ToolCallRewardError(`tool_call_workflow: a call in ${what} has no "${k}"`);
    const name = hashKey(item.get('name')!);
    if (name === undefined) return undefined;
    const key = `${name}\u0000${pyJsonDumps(item.get('arguments')!, { sortKeys: true })}`;
    out.set(key, (out.get(key) ?? 0) + 1);
  }
  return out;
}

function sameCounts(a: Map<string, number>, b: Map<string, number>): boolean {
  return a.size === b.size && [...a].every(([k, n]) => b.get(k) === n);
}

const count = (s: string, sub: string): number => s.split(sub).length - 1;

/** `compute_toolcall_reward(response, answer)`: 1 or 0; `answer` is the row's JSON text of the expected calls. */
export function toolCallReward(response: string, answer: string): number {
  let truth: PyJson;
  try {
    truth = pyJsonLoads(answer);
    if (typeof truth === 'string') truth = pyJsonLoads(truth);
  } catch (e) {
    if (e instanceof PyJsonError)
      throw new ToolCallRewardError(`tool_call_workflow: the task's answer is not JSON (${e.message})`);
    throw e;
  }
  let result = lastToolCall(response);
  if (typeof result === 'string') result = loadsOrUndefined(result);
  if (result !== undefined && isPyJsonObject(result)) result = [result];
  if (result === undefined || result === null) return 0;
  if (!response.includes('<think>') || !response.includes('</think>')) return 0;
  if (count(response, '<think>') !== 1 || count(response, '</think>') !== 1) return 0;
  const toolCallAt = response.indexOf('<tool_call>');
  if (toolCallAt !== -1 && response.indexOf('</think>') > toolCallAt) return 0;
  // validate_format: every call a dict with "name" and "arguments".
  const calls = items(result, 'the tool call block');
  if (!calls.every((c) => isPyJsonObject(c) && c.has('name') && c.has('arguments'))) return 0;
  // validate_result: 2 (full marks, reward 1) only for equal multisets of calls, or both empty.
  const expected = items(truth, "the task's answer");
  if (calls.length === 0 || expected.length === 0) return calls.length === expected.length ? 1 : 0;
  const got = callCounter(calls, 'the response');
  const want = got && callCounter(expected, "the task's answer");
  return got && want && sameCounts(got, want) ? 1 : 0;
}
