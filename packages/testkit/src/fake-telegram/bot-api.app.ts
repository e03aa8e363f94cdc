import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { API_ERRORS, BotApiError } from "./bot-api.error.ts";

/**
 * The HTTP shell of the fake: accepts every Bot API encoding (JSON, including an empty body,
 * form-urlencoded, query string; GET or POST) and answers errors in the API's envelope.
 * Built without listening so it can also be driven with `inject()`.
 */
export function buildBotApiApp(
  handle: (request: FastifyRequest, reply: FastifyReply) => Promise<void>,
): FastifyInstance {
  const app = Fastify({ logger: false, forceCloseConnections: true });
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_req, body, done) => {
    try {
      done(null, (body as string).trim() === "" ? {} : (JSON.parse(body as string) as unknown));
    } catch {
      done(API_ERRORS.badParameter("can't parse JSON"), undefined);
    }
  });
  app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  // Multipart (file uploads) is outside the subset we use: such calls arrive without params.
  app.addContentTypeParser("*", { parseAs: "string" }, (_req, _body, done) => done(null, {}));
  app.setErrorHandler((err, _request, reply) => {
    const apiError =
      err instanceof BotApiError
        ? err
        : API_ERRORS.badParameter(err instanceof Error ? err.message : String(err));
    void reply.code(apiError.errorCode).send(apiError.toBody());
  });
  app.route({ method: ["GET", "POST"], url: "/*", handler: handle });
  return app;
}
