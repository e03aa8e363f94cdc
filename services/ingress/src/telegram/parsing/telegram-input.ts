import { z } from "zod";

/**
 * The only parts of a Bot API update the bot reads. Parsed with zod because in webhook mode the
 * body comes over HTTP: an authenticated sender can still send something malformed. This is the
 * edge where input that would fail further in is refused for good (a poison update): ids are
 * range-checked (they end up in `bigint`/`integer` columns) and U+0000, which Postgres text
 * cannot hold, is stripped from every text.
 */
const id = z.number().int().refine(Number.isSafeInteger, "id out of range");
const text = z.string().transform((s) => s.replaceAll("\u0000", ""));
const chatRef = z.object({ id });
const userRef = z.object({ id, is_bot: z.boolean().optional() });

const updateSchema = z.object({
  update_id: id.pipe(z.number().nonnegative()),
  message: z
    .object({
      message_id: id.pipe(z.number().positive()),
      chat: chatRef,
      from: userRef.optional(),
      text: text.optional(),
      caption: text.optional(),
      message_thread_id: id.optional(),
      is_topic_message: z.boolean().optional(),
    })
    .optional(),
  callback_query: z
    .object({
      id: text,
      from: userRef,
      message: z
        .object({
          message_id: id,
          chat: chatRef,
          message_thread_id: id.optional(),
          is_topic_message: z.boolean().optional(),
        })
        .optional(),
      data: text.optional(),
    })
    .optional(),
  edited_message: z.object({ chat: chatRef, from: userRef.optional() }).optional(),
});

/**
 * The forum topic a message was written in. Only a topic message's thread id names a topic that
 * can be written to (a reply thread in a plain group has one too, but no topic); the General
 * topic has none.
 */
function topicOf(message: { message_thread_id?: number; is_topic_message?: boolean } | undefined): number | null {
  return message?.is_topic_message === true && message.message_thread_id !== undefined ? message.message_thread_id : null;
}

/** One update, reduced to what a handler acts on; `threadId`: its forum topic, where answers go. */
export type TelegramInput = { threadId: number | null } & (
  | {
      kind: "message";
      updateId: number;
      chatId: number;
      userId: number | null;
      messageId: number;
      /** The text, or a photo's or document's caption. */
      text: string;
    }
  | {
      kind: "button";
      updateId: number;
      /** Null for buttons under inline-mode messages, which this bot never sends. */
      chatId: number | null;
      userId: number;
      callbackQueryId: string;
      data: string;
    }
  /** A new message with nothing to read (photo without caption, sticker, voice…). */
  | { kind: "media"; updateId: number; chatId: number; userId: number | null; messageId: number }
  /** Edits, membership changes…: nothing to do and nobody to answer (never a refusal). */
  | { kind: "other"; updateId: number; chatId: number | null; userId: number | null }
);

export type ParsedUpdate = { ok: true; input: TelegramInput } | { ok: false; error: string };

export function toTelegramInput(body: unknown): ParsedUpdate {
  const parsed = updateSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      error: `${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid update"}`,
    };
  }
  const { update_id: updateId, message, callback_query: query, edited_message: edited } = parsed.data;
  if (message) {
    const userId = message.from?.id ?? null;
    const { message_id: messageId } = message;
    const text = message.text ?? message.caption;
    const threadId = topicOf(message);
    if (text === undefined)
      return { ok: true, input: { kind: "media", updateId, chatId: message.chat.id, userId, messageId, threadId } };
    return {
      ok: true,
      input: { kind: "message", updateId, chatId: message.chat.id, userId, messageId, text, threadId },
    };
  }
  if (query) {
    const input = {
      kind: "button" as const,
      updateId,
      chatId: query.message?.chat.id ?? null,
      userId: query.from.id,
      callbackQueryId: query.id,
      data: query.data ?? "",
      threadId: topicOf(query.message),
    };
    return { ok: true, input };
  }
  const userId = edited?.from?.id ?? null;
  return { ok: true, input: { kind: "other", updateId, chatId: edited?.chat.id ?? null, userId, threadId: null } };
}

/** What intake needs before storing an update: its id (required) and the chat it orders under. */
export type UpdateEnvelope = { ok: true; updateId: number; chatId: number | null } | { ok: false };

const CHAT_CARRIERS = ["message", "edited_message", "channel_post", "edited_channel_post"] as const;

/**
 * Reads the envelope without validating the rest, so that an update which will turn out to be
 * poison is still stored and acknowledged once rather than refused and redelivered forever.
 */
export function updateEnvelope(body: unknown): UpdateEnvelope {
  if (typeof body !== "object" || body === null) return { ok: false };
  const update = body as Record<string, unknown>;
  const updateId = update.update_id;
  if (typeof updateId !== "number" || !Number.isSafeInteger(updateId) || updateId < 0) return { ok: false };
  const chatIdOf = (carrier: unknown): number | null => {
    if (typeof carrier !== "object" || carrier === null) return null;
    const chat = (carrier as { chat?: { id?: unknown } }).chat;
    const chatId = chat?.id;
    return typeof chatId === "number" && Number.isSafeInteger(chatId) ? chatId : null;
  };
  for (const carrier of CHAT_CARRIERS) {
    const chatId = chatIdOf(update[carrier]);
    if (chatId !== null) return { ok: true, updateId, chatId };
  }
  const query = update.callback_query as { message?: unknown } | undefined;
  return { ok: true, updateId, chatId: chatIdOf(query?.message) };
}
