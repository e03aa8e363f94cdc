import type { ScriptTurn, TokenUsageReport } from "./script-types.ts";

/**
 * Builds the `chat.completion.chunk` payloads for one turn (without the `data:` framing). With
 * `promptTokens` the stream ends as OpenAI's does when `stream_options.include_usage` is set: a
 * chunk with no choices and the usage.
 */
export function turnChunks(turn: ScriptTurn, id: string, model: string, created: number, promptTokens?: number): object[] {
  const chunk = (delta: object, finish: string | null = null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const out: object[] = [];
  let completionTokens = 0;
  if ("text" in turn && typeof turn.text === "string" && !("toolCalls" in turn)) {
    const parts = splitText(turn.text, "chunks" in turn ? (turn.chunks ?? 1) : 1);
    parts.forEach((p, i) => out.push(chunk(i === 0 ? { role: "assistant", content: p } : { content: p })));
    out.push(chunk({}, "stop"));
    completionTokens = Math.max(1, Math.ceil(turn.text.length / 4));
  } else if ("toolCalls" in turn) {
    if (turn.text) out.push(chunk({ role: "assistant", content: turn.text }));
    turn.toolCalls.forEach((call, index) =>
      out.push(
        chunk({
          ...(index === 0 && !turn.text ? { role: "assistant" } : {}),
          tool_calls: [
            { index, id: `call_${id}_${index}`, type: "function", function: { name: call.name, arguments: JSON.stringify(call.args) } },
          ],
        }),
      ),
    );
    out.push(chunk({}, "tool_calls"));
    completionTokens = 8 * turn.toolCalls.length;
  }
  if (promptTokens === undefined) return out;
  const usage: TokenUsageReport = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  out.push({ id, object: "chat.completion.chunk", created, model, choices: [], usage });
  return out;
}

export function splitText(text: string, parts: number): string[] {
  if (parts <= 1 || text.length <= 1) return [text];
  const size = Math.ceil(text.length / parts);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export function sseFrame(payload: object | "[DONE]"): string {
  return `data: ${payload === "[DONE]" ? payload : JSON.stringify(payload)}\n\n`;
}
