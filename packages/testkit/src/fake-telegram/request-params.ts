import { API_ERRORS } from "./bot-api.error.ts";

/**
 * Parameters of one Bot API call, merged from the query string and a JSON or form body.
 * In query strings and form bodies every value is a string and objects are JSON-serialized,
 * so the readers below accept both shapes, as the real API does.
 */
export type Params = Record<string, unknown>;

export function mergeParams(query: unknown, body: unknown): Params {
  const fromQuery = query && typeof query === "object" ? (query as Params) : {};
  const fromBody = body && typeof body === "object" && !Array.isArray(body) ? (body as Params) : {};
  return { ...fromQuery, ...fromBody };
}

function isAbsent(value: unknown): boolean {
  return value === undefined || value === null || value === "";
}

export function optionalInt(params: Params, name: string): number | undefined {
  const value = params[name];
  if (isAbsent(value)) return undefined;
  const parsed = typeof value === "number" ? value : Number(value);
  if (!Number.isInteger(parsed)) throw API_ERRORS.badParameter(`invalid ${name} specified`);
  return parsed;
}

export function requiredInt(params: Params, name: string): number {
  const value = optionalInt(params, name);
  if (value === undefined) throw API_ERRORS.parameterEmpty(name);
  return value;
}

export function optionalString(params: Params, name: string): string | undefined {
  const value = params[name];
  if (isAbsent(value)) return undefined;
  return typeof value === "string" ? value : String(value);
}

export function optionalBool(params: Params, name: string): boolean {
  const value = params[name];
  return value === true || value === "true" || value === "1" || value === 1;
}

/** `chat_id` is an integer or an `@username` string; the fake knows chats by id only. */
export function requiredChatId(params: Params): number {
  const value = params.chat_id;
  if (isAbsent(value)) throw API_ERRORS.parameterEmpty("chat_id");
  const parsed = typeof value === "number" ? value : Number(value);
  if (!Number.isInteger(parsed)) throw API_ERRORS.chatNotFound();
  return parsed;
}

/** An object parameter: given inline in JSON bodies, JSON-serialized in forms and query strings. */
export function optionalJson(params: Params, name: string, whatIsIt: string): unknown {
  const value = params[name];
  if (isAbsent(value)) return undefined;
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw API_ERRORS.badParameter(`can't parse ${whatIsIt} JSON object`);
  }
}
