import type { ChatMessage, ModelRequest } from "./script-types.ts";

interface ChatBody {
  messages?: ChatMessage[];
  tools?: Array<{ function?: { name?: string } }>;
}

function textOf(content: ChatMessage["content"]): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => p.text ?? "").join("");
  return "";
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
  };
}
