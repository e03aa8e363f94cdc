/** Why retrying a Telegram call cannot help. */
export type PermanentReason =
  | "chat-not-found"
  | "bot-blocked"
  | "bot-kicked"
  | "user-deactivated"
  | "forbidden"
  | "chat-migrated"
  | "message-not-modified"
  | "message-not-found"
  | "bad-markup"
  | "message-too-long"
  | "bad-request"
  | "unauthorized"
  | "not-found"
  | "conflict";

export type TelegramErrorClass =
  /** 429: wait this long before the next call (Telegram's `retry_after`, in ms). */
  | { kind: "retry-after"; retryAfterMs: number }
  | { kind: "permanent"; reason: PermanentReason; description: string }
  /** Certainly not performed (refused connection, DNS, TLS, a 5xx answer): retry with backoff. */
  | { kind: "transient"; description: string }
  /** May have been performed, the answer was lost (timeout, reset after writing): never blindly retry. */
  | { kind: "in-doubt"; description: string };

/** What we can read off an error from telegraf (`TelegramError`), a raw API answer or fetch. */
interface ApiFailure {
  code: number;
  description: string;
  retryAfterSec: number | undefined;
  migrateTo: number | undefined;
}

const asRecord = (value: unknown): Record<string, unknown> | undefined =>
  value !== null && typeof value === "object" ? (value as Record<string, unknown>) : undefined;

/** telegraf's TelegramError keeps the API answer in `response`; a raw answer has the fields itself. */
function readApiFailure(err: unknown): ApiFailure | undefined {
  const outer = asRecord(err);
  const body = asRecord(outer?.response) ?? outer;
  const code = body?.error_code;
  if (typeof code !== "number") return undefined;
  const parameters = asRecord(body?.parameters);
  const description = body?.description ?? outer?.description;
  return {
    code,
    description: typeof description === "string" ? description : "",
    retryAfterSec: typeof parameters?.retry_after === "number" ? parameters.retry_after : undefined,
    migrateTo: typeof parameters?.migrate_to_chat_id === "number" ? parameters.migrate_to_chat_id : undefined,
  };
}

const FORBIDDEN: Array<[RegExp, PermanentReason]> = [
  [/blocked by the user/i, "bot-blocked"],
  [/kicked from/i, "bot-kicked"],
  [/user is deactivated/i, "user-deactivated"],
  [/chat not found/i, "chat-not-found"],
];

const BAD_REQUEST: Array<[RegExp, PermanentReason]> = [
  [/chat not found/i, "chat-not-found"],
  [/message is not modified/i, "message-not-modified"],
  [/message to (edit|delete) not found|message can't be edited/i, "message-not-found"],
  [/can't parse entities/i, "bad-markup"],
  [/message is too long/i, "message-too-long"],
  [/group chat was upgraded to a supergroup/i, "chat-migrated"],
];

function permanent(reason: PermanentReason, description: string): TelegramErrorClass {
  return { kind: "permanent", reason, description };
}

function classifyApiFailure(failure: ApiFailure): TelegramErrorClass {
  const { code, description } = failure;
  if (code === 429) {
    // Without retry_after there is nothing to honour: back off like any transient failure.
    return failure.retryAfterSec === undefined
      ? { kind: "transient", description }
      : { kind: "retry-after", retryAfterMs: Math.max(0, failure.retryAfterSec) * 1000 };
  }
  if (code >= 500 || code === 408) return { kind: "transient", description };
  if (code === 403)
    return permanent(FORBIDDEN.find(([re]) => re.test(description))?.[1] ?? "forbidden", description);
  if (code === 400) {
    if (failure.migrateTo !== undefined) return permanent("chat-migrated", description);
    return permanent(BAD_REQUEST.find(([re]) => re.test(description))?.[1] ?? "bad-request", description);
  }
  if (code === 401) return permanent("unauthorized", description);
  if (code === 404) return permanent("not-found", description);
  if (code === 409) return permanent("conflict", description);
  return permanent("bad-request", description);
}

/**
 * Network failures that happen before a request can have been written: nothing reached Telegram.
 * (node: ECONNREFUSED and friends; undici: UND_ERR_CONNECT_TIMEOUT; DNS; TLS handshake.) Every
 * other transport failure — ECONNRESET, EPIPE, "socket hang up", undici's UND_ERR_SOCKET
 * ("other side closed"), headers/body timeouts, our own abort — may come after the request went
 * out, so its effect is unknown.
 */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_NONAME",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
  "CERT_HAS_EXPIRED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/** Error codes on the error and down its `cause` chain (fetch wraps them, AggregateError lists them). */
function errorCodes(err: unknown, depth = 0): string[] {
  const record = asRecord(err);
  if (!record || depth > 4) return [];
  const own = typeof record.code === "string" ? [record.code] : [];
  const nested = Array.isArray(record.errors) ? record.errors.flatMap((e) => errorCodes(e, depth + 1)) : [];
  return [...own, ...nested, ...errorCodes(record.cause, depth + 1)];
}

/**
 * Decides what a failed Bot API call means for the job that made it: wait `retry_after`
 * (429), give up (the chat is gone, the bot is blocked, the request itself is wrong), retry with
 * backoff (Telegram answered with an error, or the request never left: refused connection, DNS,
 * TLS) or — any other transport failure, the unknown included — in doubt: the message may be in
 * the chat, so a blind retry could send it twice. Works on telegraf's `TelegramError`
 * (`err.response.error_code`, …), on a raw `{ ok: false, error_code, … }` answer and on
 * fetch/undici/node-fetch network errors.
 */
export function classifyTelegramError(err: unknown): TelegramErrorClass {
  const failure = readApiFailure(err);
  if (failure) return classifyApiFailure(failure);
  const record = asRecord(err);
  const cause = asRecord(record?.cause);
  const parts = [record?.name, record?.code, record?.message, cause?.code, cause?.message]
    .filter((part) => typeof part === "string")
    .join(": ");
  const description = parts || String(err);
  const codes = errorCodes(err);
  if (codes.length > 0 && codes.every((code) => NOT_SENT_CODES.has(code))) return { kind: "transient", description };
  return { kind: "in-doubt", description };
}
