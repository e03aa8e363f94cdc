import { deliveryHeaders, readDelivery, verifySignature } from "@ratatoskr/gitea";
import type { Logger } from "@ratatoskr/runtime";
import type { FastifyInstance } from "fastify";
import { CommandRefusedError, type AcceptOutcome, type IncomingCommand } from "../store/command-acceptor.ts";
import { commandOf, commentDeliveryId } from "./comment-command.ts";

export const GITEA_WEBHOOK_PATH = "/webhooks/gitea";

export interface GiteaWebhookOptions {
  secret: string;
  bodyLimitBytes: number;
  /** The bot's login, known once discovered; its own comments are ignored. */
  botLogin: () => string;
  /** The one durable write before the answer: the command as read. */
  accept(command: IncomingCommand): Promise<AcceptOutcome>;
  /** A command was stored: make its task (after the answer, never delaying it). */
  stored(): void;
  logger: Logger;
}

/**
 * `POST /webhooks/gitea` (G1) in its own context: the body stays raw bytes for the signature.
 * 401 when unsigned or forged (nothing stored), 400 for a malformed delivery, 204 for anything
 * that is not a new `/agent` comment, 202 once the command is stored, 200 when the comment was
 * stored before. Gitea's and Forgejo's headers alike (G8).
 */
export async function registerGiteaWebhook(app: FastifyInstance, opts: GiteaWebhookOptions): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      "*",
      { parseAs: "buffer", bodyLimit: opts.bodyLimitBytes },
      (_req, body, done) => done(null, body),
    );
    scope.setErrorHandler(async (error, request, reply) => {
      const status = (error as { statusCode?: number }).statusCode;
      if (status === 413) return reply.code(413).send({ error: "delivery too large" });
      if (status !== undefined && status >= 400 && status < 500)
        return reply.code(400).send({ error: "malformed delivery" });
      // Postgres down: Gitea shows the failed delivery and the sweep takes the comment in later.
      request.log.error({ err: error }, "gitea delivery not stored");
      return reply.code(503).send({ error: "not stored, try Redeliver later" });
    });
    scope.post(GITEA_WEBHOOK_PATH, async (request, reply) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const { event, deliveryId: givenId, signature } = deliveryHeaders(request.headers);
      if (!verifySignature(raw, signature, opts.secret)) {
        // Who knocked and why, never the body or the presented signature.
        opts.logger.warn(
          {
            reqId: request.id,
            deliveryId: givenId,
            reason: signature === undefined ? "signature missing" : "signature wrong",
          },
          "gitea delivery refused: bad signature",
        );
        return reply.code(401).send({ error: "bad signature" });
      }
      const reading = readDelivery(event, raw);
      if (reading.kind === "malformed") return reply.code(400).send({ error: "malformed delivery" });
      if (reading.kind === "ignored") return reply.code(204).send();
      if (reading.kind === "invalid") {
        request.log.warn({ why: reading.why }, "gitea delivery refused: invalid comment payload");
        return reply.code(422).send({ error: `invalid comment payload (${reading.why})` });
      }
      const deliveryId = givenId ?? commentDeliveryId("unnamed", reading.comment);
      const command = commandOf(reading.comment, opts.botLogin(), {
        deliveryId,
        event: event ?? "issue_comment",
      });
      if (!command) return reply.code(204).send();
      const outcome = await opts.accept(command).catch((error: unknown) => {
        if (!(error instanceof CommandRefusedError)) throw error;
        // Redelivering it would fail the same way: refused, logged, never retried.
        request.log.warn({ err: error, deliveryId, commentId: command.commentId }, "gitea command refused");
        return undefined;
      });
      if (!outcome) return reply.code(422).send({ error: "the comment cannot be stored as sent" });
      if (outcome.status === "duplicate") return reply.code(200).send({ status: "duplicate" });
      opts.stored();
      return reply.code(202).send({ status: "accepted" });
    });
  });
}
