import { pino, type DestinationStream, type Logger } from "pino";
import type { LogLevel } from "../config/base-config.ts";
import { REDACTED, scrubSecrets } from "./secret-scrubber.ts";

export type { Logger } from "pino";

/** Object keys whose values are always secrets. Matched at the top level and two levels down. */
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

/** pino redaction paths, fixed at start-up (fast-redact compiles them once). */
export function secretRedactionPaths(extraKeys: readonly string[] = []): string[] {
  const keys = [...SECRET_KEYS, ...extraKeys];
  const header = ["authorization", "cookie", "x-gitea-signature", "x-telegram-bot-api-secret-token"];
  return [
    ...keys.flatMap((k) => [k, `*.${k}`, `*.*.${k}`]),
    ...header.flatMap((h) => [`req.headers["${h}"]`, `headers["${h}"]`, `*.headers["${h}"]`]),
  ];
}

export interface CreateLoggerOptions {
  service: string;
  level: LogLevel;
  version?: string;
  /** Where JSON lines go; stdout when omitted (tests pass a capturing stream). */
  destination?: DestinationStream;
  /** Service-specific secret keys on top of the built-in list. */
  secretKeys?: readonly string[];
}

/**
 * JSON logger with `service` on every line. Secrets are removed twice: by key (pino redact) and
 * by content (every serialized line is scrubbed, which also covers messages and error stacks).
 */
export function createLogger(opts: CreateLoggerOptions): Logger {
  return pino(
    {
      level: opts.level,
      base: { service: opts.service, ...(opts.version ? { version: opts.version } : {}) },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: secretRedactionPaths(opts.secretKeys), censor: REDACTED },
      hooks: { streamWrite: scrubSecrets },
    },
    opts.destination,
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
