import type { Logger } from "@ratatoskr/runtime";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { secretMatcher } from "../../security/same-secret.ts";

export const TELEGRAM_SECRET_HEADER = "x-telegram-bot-api-secret-token";

/**
 * An update is a few kilobytes (a message is at most 4096 characters, with the one it replies
 * to); anything much larger is not from Telegram and is refused before it is read.
 */
export const WEBHOOK_BODY_LIMIT = 256 * 1024;

export type WebhookOutcome = "accepted" | "malformed" | "closed";

/** A webhook body: the text exactly as it arrived (what is stored) and its parsed JSON (what is read). */
export interface ReceivedUpdate {
  raw: string;
  json: unknown;
}

export interface TelegramWebhookOptions {
  path: string;
  secret: string;
  logger: Logger;
  bodyLimit?: number;
  /**
   * Makes the update durable (X6); resolves once it is. Handling happens afterwards, so the
   * answer never waits on it. Throwing (the database is away) answers 500 and Telegram retries.
   */
  accept(body: ReceivedUpdate): Promise<WebhookOutcome>;
}

/**
 * The webhook intake on the host's fastify app, in its own encapsulated context. The secret is
 * checked in `onRequest`, before the body is read; malformed input gets fastify's own 4xx; every
 * refusal is logged with its reason (never the body or the presented secret).
 */
export async function registerTelegramWebhook(
  app: FastifyInstance,
  opts: TelegramWebhookOptions,
): Promise<void> {
  const log = opts.logger.child({ route: "telegram-webhook" });
  const rightSecret = secretMatcher(opts.secret);
  const refuse = (request: FastifyRequest, reply: FastifyReply, status: number, reason: string) => {
    log.warn(
      { reqId: request.id, status, reason, contentType: request.headers["content-type"] },
      "telegram webhook request refused",
    );
    return reply.code(status).send({ error: reason });
  };

  await app.register(async (scope) => {
    // Telegram posts JSON only: any other content type gets fastify's 415. The body is kept as
    // the text that came (stored as is: never serialised again from the parsed value, which for
    // deeply nested input throws on every redelivery) beside fastify's own safe parse of it.
    scope.removeContentTypeParser("text/plain");
    const parseJson = scope.getDefaultJsonParser("error", "error");
    scope.removeContentTypeParser("application/json");
    scope.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
      parseJson(request, body as string, (err, json) => (err ? done(err) : done(null, { raw: body as string, json })));
    });
    scope.setErrorHandler(async (error: FastifyError, request, reply) => {
      const status = error.statusCode ?? 500;
      if (status >= 400 && status < 500) return refuse(request, reply, status, error.code ?? "bad request");
      log.error({ err: error, reqId: request.id }, "telegram webhook failed; Telegram will deliver again");
      return reply.code(500).send({ error: "update not taken" });
    });
    scope.post(opts.path, {
      bodyLimit: opts.bodyLimit ?? WEBHOOK_BODY_LIMIT,
      onRequest: async (request, reply) => {
        const given = request.headers[TELEGRAM_SECRET_HEADER];
        if (typeof given !== "string" || !rightSecret(given))
          return refuse(request, reply, 401, given === undefined ? "secret missing" : "secret wrong");
      },
      handler: async (request, reply) => {
        const outcome = await opts.accept(request.body as ReceivedUpdate);
        if (outcome === "closed") return reply.code(503).send({ error: "shutting down" });
        if (outcome === "malformed") return refuse(request, reply, 400, "malformed update");
        return reply.code(200).send({ ok: true });
      },
    });
  });
}
