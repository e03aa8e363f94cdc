import { createRequire } from "node:module";
import { pino, type DestinationStream, type Logger } from "pino";
import type PinoPretty from "pino-pretty";
import type { LogFormat, LogLevel } from "../config/base-config.ts";
import { REDACTED, scrubSecrets } from "./secret-scrubber.ts";

export type { Logger } from "pino";

/** Object keys whose values are always secrets, at any depth up to MAX_DEPTH. */
const SECRET_KEYS = [
  "token",
  "accessToken",
  "refreshToken",
  "botToken",
  "apiToken",
  "authToken",
  "giteaToken",
  "telegramToken",
  "password",
  "secret",
  "webhookSecret",
  "clientSecret",
  "apiKey",
  "authorization",
  "cookie",
  "privateKey",
  "credentials",
];

const HEADER_SECRETS = ["authorization", "cookie", "x-gitea-signature", "x-telegram-bot-api-secret-token"];

/** How deep a logged object is searched for secret keys (the old `*.*.key` paths, plus headers). */
const MAX_DEPTH = 4;

/**
 * Redacts secret keys by name in one walk over the logged object: an explicit set of keys
 * (the built-in list, a service's own, secret headers) instead of pino's wildcard paths, which
 * cost a pass per path per line. Copies only the branches that hold a secret; the caller's
 * objects are never changed.
 */
export function createKeyRedactor(
  extraKeys: readonly string[] = [],
): (value: Record<string, unknown>) => Record<string, unknown> {
  const secret = new Set([...SECRET_KEYS, ...extraKeys, ...HEADER_SECRETS].map((k) => k.toLowerCase()));
  function walk(value: unknown, depth: number): unknown {
    if (value === null || typeof value !== "object" || depth > MAX_DEPTH || value instanceof Error)
      return value;
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      value.forEach((item, i) => {
        const next = walk(item, depth + 1);
        if (next !== item) (copy ??= [...value])[i] = next;
      });
      return copy ?? value;
    }
    let copy: Record<string, unknown> | undefined;
    for (const key in value) {
      const item = (value as Record<string, unknown>)[key];
      const next = secret.has(key.toLowerCase()) && item !== undefined ? REDACTED : walk(item, depth + 1);
      if (next !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = next;
    }
    return copy ?? value;
  }
  return (value) => walk(value, 0) as Record<string, unknown>;
}

export interface CreateLoggerOptions {
  service: string;
  level: LogLevel;
  version?: string;
  /** Where JSON lines go; stdout when omitted (tests pass a capturing stream). */
  destination?: DestinationStream;
  /** Service-specific secret keys on top of the built-in list. */
  secretKeys?: readonly string[];
  /** LOG_FORMAT: `auto` (the default) is pretty on a terminal, JSON anywhere else. */
  format?: LogFormat;
  /** Whether stdout is a terminal (tests pass it); `process.stdout.isTTY` when omitted. */
  isTTY?: boolean;
}

/** Pure: the format lines are written in. */
export function resolveLogFormat(format: LogFormat = "auto", isTTY = false): "json" | "pretty" {
  if (format === "auto") return isTTY ? "pretty" : "json";
  return format;
}

/** pino-pretty, loaded only when a person reads the logs; colours only on a terminal. */
function prettyStream(destination: DestinationStream | undefined, colorize: boolean): DestinationStream {
  const pretty = createRequire(import.meta.url)("pino-pretty") as typeof PinoPretty;
  return pretty({
    colorize,
    sync: true,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "pid,hostname",
    ...(destination ? { destination } : {}),
  });
}

/**
 * JSON logger with `service` on every line (pretty lines for a person at a terminal, see
 * resolveLogFormat). Secrets are removed twice: by key (one walk over the
 * logged object) and by content (a serialized line that may hold one is scrubbed, which also
 * covers messages and error stacks).
 */
export function createLogger(opts: CreateLoggerOptions): Logger {
  const redact = createKeyRedactor(opts.secretKeys);
  const isTTY = opts.isTTY ?? process.stdout.isTTY === true;
  const destination =
    resolveLogFormat(opts.format, isTTY) === "pretty"
      ? prettyStream(opts.destination, isTTY)
      : opts.destination;
  return pino(
    {
      level: opts.level,
      base: { service: opts.service, ...(opts.version ? { version: opts.version } : {}) },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }), log: redact, bindings: redact },
      hooks: { streamWrite: scrubSecrets },
    },
    destination,
  );
}

/** Per-job child logger; every line of the job's work carries its ids. */
export function jobLogger(
  logger: Logger,
  ids: { queue: string; jobId: string | undefined; taskId?: number | string | undefined },
): Logger {
  const bindings: Record<string, unknown> = { queue: ids.queue, jobId: ids.jobId };
  if (ids.taskId !== undefined) bindings.taskId = ids.taskId;
  return logger.child(bindings);
}
