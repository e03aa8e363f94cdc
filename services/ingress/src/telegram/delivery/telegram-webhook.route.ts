import type { FastifyInstance } from "fastify";
import { sameSecret } from "../../security/same-secret.ts";

export const TELEGRAM_SECRET_HEADER = "x-telegram-bot-api-secret-token";

export type WebhookOutcome = "handled" | "malformed" | "closed";

export interface TelegramWebhookOptions {
  path: string;
  secret: string;
  /**
   * Handles one update before the answer goes out, so Telegram sends the chat's next update only
   * after this one is stored; throwing makes the route answer 500 and Telegram deliver it again.
   */
  onUpdate(body: unknown): Promise<WebhookOutcome>;
}

/** The webhook intake on the host's fastify app, in its own encapsulated context. */
export async function registerTelegramWebhook(
  app: FastifyInstance,
  opts: TelegramWebhookOptions,
): Promise<void> {
  await app.register(async (scope) => {
    // The failure was logged where it happened; the answer names nothing internal.
    scope.setErrorHandler(async (_error, _request, reply) =>
      reply.code(500).send({ error: "update not handled" }),
    );
    scope.post(opts.path, async (request, reply) => {
      const given = request.headers[TELEGRAM_SECRET_HEADER];
      if (typeof given !== "string" || !sameSecret(given, opts.secret)) {
        return reply.code(401).send({ error: "unauthorized" });
      }
      const outcome = await opts.onUpdate(request.body);
      if (outcome === "closed") return reply.code(503).send({ error: "shutting down" });
      if (outcome === "malformed") return reply.code(400).send({ error: "malformed update" });
      return reply.code(200).send({ ok: true });
    });
  });
}
