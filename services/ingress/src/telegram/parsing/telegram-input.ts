import { z } from "zod";

/**
 * The only parts of a Bot API update the bot reads. Parsed with zod because in webhook mode the
 * body comes over HTTP: an authenticated sender can still send something malformed.
 */
const chatRef = z.object({ id: z.number().int() });
const userRef = z.object({ id: z.number().int(), is_bot: z.boolean().optional() });

const updateSchema = z.object({
  update_id: z.number().int().nonnegative(),
  message: z
    .object({
      message_id: z.number().int(),
      chat: chatRef,
      from: userRef.optional(),
      text: z.string().optional(),
    })
    .optional(),
  callback_query: z
    .object({
      id: z.string(),
      from: userRef,
      message: z.object({ message_id: z.number().int(), chat: chatRef }).optional(),
      data: z.string().optional(),
    })
    .optional(),
  edited_message: z.object({ chat: chatRef }).optional(),
});

/** One update, reduced to what a handler acts on. */
export type TelegramInput =
  | {
      kind: "message";
      updateId: number;
      chatId: number;
      userId: number | null;
      messageId: number;
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
  /** Photos, stickers, edits…: nothing to do, but the sender still passes the allowlist. */
  | { kind: "other"; updateId: number; chatId: number | null; userId: number | null };

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
    if (message.text === undefined)
      return { ok: true, input: { kind: "other", updateId, chatId: message.chat.id, userId } };
    const { message_id: messageId, text } = message;
    return {
      ok: true,
      input: { kind: "message", updateId, chatId: message.chat.id, userId, messageId, text },
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
    };
    return { ok: true, input };
  }
  return { ok: true, input: { kind: "other", updateId, chatId: edited?.chat.id ?? null, userId: null } };
}
