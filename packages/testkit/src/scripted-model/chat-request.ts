import type { ChatMessage, ModelRequest } from "./script-types.ts";

interface ChatBody {
  messages?: ChatMessage[];
  stream_options?: { include_usage?: boolean };
  tools?: Array<{ function?: { name?: string } }>;
}

function textOf(content: ChatMessage["content"]): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => p.text ?? "").join("");
  return "";
}

/**
 * Roughly what a tokenizer makes of a request: a token per four characters of its messages and
 * tool definitions (a real provider counts the whole prompt; the exact figure does not matter,
 * only that it grows with what is sent).
 */
export function promptTokens(body: unknown): number {
  const chat = (body ?? {}) as ChatBody;
  return Math.max(1, Math.ceil(JSON.stringify([chat.messages ?? [], chat.tools ?? []]).length / 4));
}

/** Turns a raw chat-completions body into the fields scripts match on. */
export function parseChatRequest(
  body: unknown,
  sessionId: string | undefined,
  seq: number,
  receivedAt: number,
): ModelRequest {
  const chat = (body ?? {}) as ChatBody;
  const messages = Array.isArray(chat.messages) ? chat.messages : [];
  const userTexts = messages.filter((m) => m.role === "user").map((m) => textOf(m.content));
  return {
    seq,
    receivedAt,
    aborted: false,
    sessionId,
    system: messages
      .filter((m) => m.role === "system")
      .map((m) => textOf(m.content))
      .join("\n"),
    userTexts,
    lastUserText: userTexts.at(-1) ?? "",
    isToolResult: messages.at(-1)?.role === "tool",
    tools: (chat.tools ?? []).map((t) => t.function?.name ?? "").filter(Boolean),
    messages,
    answeredBy: "",
    turnIndex: 0,
    includeUsage: chat.stream_options?.include_usage === true,
  };
}
