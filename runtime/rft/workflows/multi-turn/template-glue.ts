/**
 * What the chat template adds between turns, as text: after the model's last response, the template's end of that
 * message, the messages that follow it and the next generation prompt. Found by rendering the conversation with the
 * last assistant message's content replaced by a sentinel and taking what the template put after it, so it holds
 * for any template that copies message content through (ChatML, Llama, Qwen3's reasoning split), whatever the
 * template does to earlier turns. The response's own stop token (sampled, so already in the context) is not added
 * twice: when the template's text after the content starts with it, that part is dropped.
 */
import type { ChatMessage } from '../../../engine/tokenizer';

const SENTINEL = '⟦trinity-workbench:assistant-content⟧';

/** Renders messages under the chat template with the generation prompt (the RolloutModel's `renderChat`). */
export type RenderChat = (messages: readonly ChatMessage[]) => string;

export class TemplateGlueError extends Error {}

/**
 * The text the template puts after assistant message `assistantIndex` of `messages` (whose later messages are the
 * ones to add), up to and including the next generation prompt; `stopText` is the text of the stop token the
 * response was sampled with, if any.
 */
export function glueAfterAssistant(
  render: RenderChat,
  messages: readonly ChatMessage[],
  assistantIndex: number,
  stopText: string | null,
): string {
  const probe = messages.map((m, i) => (i === assistantIndex ? { ...m, content: SENTINEL } : m));
  const full = render(probe);
  const at = full.indexOf(SENTINEL);
  if (at < 0 || full.indexOf(SENTINEL, at + 1) >= 0)
    throw new TemplateGlueError(
      "the chat template does not copy an assistant message's content through once, so the tokens between turns cannot be found",
    );
  const after = full.slice(at + SENTINEL.length);
  return stopText && after.startsWith(stopText) ? after.slice(stopText.length) : after;
}
