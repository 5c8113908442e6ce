/**
 * `tool_call_workflow` (`toolcall_workflow` before v0.4.0): Trinity's single-turn tool-calling workflow after
 * Tool-N1, trinity/common/workflows/customized_toolcall_workflows.py (modelscope/Trinity-RFT @7f9b280; the same
 * prompt and reward on agentscope-ai/Trinity-RFT main). The messages come from the row itself (`raw_system`,
 * `tools`, `conversations`), not from the taskset's prompt/response keys; each of the n responses is scored by
 * `compute_toolcall_reward` against the row's `answer` (0 when the row has none, as Trinity logs and assigns).
 */
import type { ChatMessage } from '../../engine/tokenizer';
import { pyJsonDumps, pyJsonLoads, PyJsonError, type PyJson } from '../rewards/python-json';
import { toolCallReward } from '../rewards/tool-call-reward';
import { WorkflowError } from './simple';
import type { Workflow, WorkflowContext } from './types';

/** `qwen_tool_prompts` (Tool-N1's), with `{tools}` the tools one JSON object a line. */
export function toolCallSystemSuffix(tools: string): string {
  return `# Tool

<tools>
${tools}
</tools>

In each action step, you MUST:
1. Think about the reasoning process in the mind and enclosed your reasoning within <think> </think> XML tags.
2. Then, provide a json object with function names and arguments within <tool_call></tool_call> XML tags. i.e., <tool_call>[{"name": <function-name>, "arguments": <args-json-object>}, {"name": <function-name2>, "arguments": <args-json-object2>}, ...]</tool_call>
3. Make sure both the reasoning and the tool call steps are included together in one single reply.
A complete reply example is: <think>To address the query, I need to send the email to Bob and then buy the banana through walmart. </think> <tool_call> [{"name": "email", "arguments": {"receiver": "Bob", "content": "I will bug banana through walmart"}}, {"name": "walmart", "arguments": {"input": "banana"}}]</tool_call>. Please make sure the type of the arguments is correct.
`;
}

/** Which role each `conversations[].from` becomes (other senders are left out, as Trinity's loop skips them). */
const ROLE_OF: Record<string, ChatMessage['role']> = {
  human: 'user',
  user: 'user',
  gpt: 'assistant',
  assistant: 'assistant',
  observation: 'tool',
  tool: 'tool',
  function_call: 'assistant',
};

function column(raw: Record<string, unknown>, key: string): unknown {
  if (!(key in raw)) throw new WorkflowError(`tool_call_workflow: the task has no \`${key}\` column`);
  return raw[key];
}

/** `construct_prompt(raw_task)`: the system prompt with the tools, then the conversation so far. */
export function toolCallMessages(raw: Record<string, unknown>): ChatMessage[] {
  const toolsText = column(raw, 'tools');
  const system = column(raw, 'raw_system');
  const conversations = column(raw, 'conversations');
  if (typeof toolsText !== 'string')
    throw new WorkflowError("tool_call_workflow: the task's `tools` must be a JSON string (Trinity json.loads it)");
  if (typeof system !== 'string') throw new WorkflowError("tool_call_workflow: the task's `raw_system` must be text");
  if (!Array.isArray(conversations))
    throw new WorkflowError("tool_call_workflow: the task's `conversations` must be a list of {from, value}");
  let tools: PyJson;
  try {
    tools = pyJsonLoads(toolsText);
  } catch (e) {
    if (e instanceof PyJsonError) throw new WorkflowError(`tool_call_workflow: \`tools\` is not JSON (${e.message})`);
    throw e;
  }
  if (!Array.isArray(tools) || tools.length === 0)
    throw new WorkflowError("tool_call_workflow: the task's `tools` must be a non-empty JSON list of functions");
  const lines = tools.map((tool) =>
    pyJsonDumps(
      new Map<string, PyJson>([
        ['type', 'function'],
        ['function', tool],
      ]),
    ),
  );
  const messages: ChatMessage[] = [{ role: 'system', content: system + toolCallSystemSuffix(lines.join('\n')) }];
  for (const turn of conversations as { from?: unknown; value?: unknown }[]) {
    const role = typeof turn?.from === 'string' ? ROLE_OF[turn.from] : undefined;
    if (!role) continue;
    const value = turn.from === 'function_call' ? pyJsonDumps(fromJs(turn.value)) : turn.value;
    if (typeof value !== 'string')
      throw new WorkflowError(`tool_call_workflow: a \`${String(turn.from)}\` turn's \`value\` must be text`);
    messages.push({ role, content: value });
  }
  return messages;
}

/** A value the dataset reader parsed (plain JavaScript JSON) as Python's json.loads would hold it. */
function fromJs(v: unknown): PyJson {
  return pyJsonLoads(JSON.stringify(v ?? null));
}

export function toolCallWorkflow(ctx: WorkflowContext): Workflow {
  const messages = toolCallMessages(ctx.task.raw);
  const answer = ctx.task.raw.answer;
  if (answer !== undefined && answer !== null && typeof answer !== 'string')
    throw new WorkflowError("tool_call_workflow: the task's `answer` must be the JSON text of the expected calls");
  return {
    repeatable: true,
    concurrentRuns: true,
    run: async () => {
      const exps = await ctx.model.chat(messages, { ...ctx.task.rolloutArgs, n: ctx.repeatTimes });
      exps.forEach((e, i) => {
        e.reward = typeof answer === 'string' ? toolCallReward(e.responseText ?? '', answer) : 0;
        e.eid.run = i + ctx.runIdBase;
      });
      return exps;
    },
  };
}
