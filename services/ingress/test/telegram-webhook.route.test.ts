import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { capturedLogger } from "./support/captured-logger.ts";
import {
  registerTelegramWebhook,
  TELEGRAM_SECRET_HEADER,
  type WebhookOutcome,
} from "../src/telegram/delivery/telegram-webhook.route.ts";

const SECRET = "wh-Secret_0123456789";
const PATH = "/telegram/webhook";

/** The route alone on a bare app, with its log lines captured and what it accepted recorded. */
async function routeUnderTest() {
  const { logger, lines, raw } = capturedLogger();
  const accepted: unknown[] = [];
  let outcome: WebhookOutcome = "accepted";
  const app = Fastify({ logger: false });
  await registerTelegramWebhook(app, {
    path: PATH,
    secret: SECRET,
    logger,
    async accept(body) {
      accepted.push(body);
      return outcome;
    },
  });
  await app.ready();
  return {
    app,
    lines,
    raw,
    accepted,
    answer: (next: WebhookOutcome) => (outcome = next),
  };
}

type Route = Awaited<ReturnType<typeof routeUnderTest>>;

const post = (app: FastifyInstance, payload: string, headers: Record<string, string> = {}) =>
  app.inject({
    method: "POST",
    url: PATH,
    payload,
    headers: { "content-type": "application/json", ...headers },
  });

describe("telegram webhook route", () => {
  let r: Route;
  beforeEach(async () => {
    r = await routeUnderTest();
  });
  afterEach(async () => {
    await r.app.close();
  });

  const refusals = () => r.lines.filter((l) => l.msg === "telegram webhook request refused");

  it("checks the secret before reading the body: hostile input without it is a 401, not a 500", async () => {
    const cases = [
      post(r.app, "{not json"),
      post(r.app, "x".repeat(5 * 1024 * 1024)),
      post(r.app, '{"update_id":1}', { "content-type": "text/plain" }),
      post(r.app, '{"update_id":1,"__proto__":{"admin":true}}'),
      post(r.app, '{"update_id":1}', { [TELEGRAM_SECRET_HEADER]: `${SECRET}x` }),
    ];
    const statuses = (await Promise.all(cases)).map((res) => res.statusCode);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    expect(r.accepted).toEqual([]);
    expect(refusals().map((l) => [l.status, l.reason])).toEqual([
      [401, "secret missing"],
      [401, "secret missing"],
      [401, "secret missing"],
      [401, "secret missing"],
      [401, "secret wrong"],
    ]);
  });

  it("answers malformed input with fastify's own 4xx, logs it, and takes nothing", async () => {
    const auth = { [TELEGRAM_SECRET_HEADER]: SECRET };
    const statuses = [
      (await post(r.app, "{not json", auth)).statusCode,
      (await post(r.app, JSON.stringify({ update_id: 1, pad: "x".repeat(5 * 1024 * 1024) }), auth)).statusCode,
      (await post(r.app, '{"update_id":1}', { ...auth, "content-type": "text/plain" })).statusCode,
      (await post(r.app, '{"update_id":1,"__proto__":{"admin":true}}', auth)).statusCode,
      (await post(r.app, "", auth)).statusCode,
    ];
    expect(statuses).toEqual([400, 413, 415, 400, 400]);
    expect(r.accepted).toEqual([]);
    expect(refusals().map((l) => l.status)).toEqual(statuses);
    expect(r.lines.filter((l) => l.level === "error")).toEqual([]);
  });

  it("never logs the body or the presented secret", async () => {
    await post(r.app, '{"update_id":1,"message":"PRIVATE-TEXT"', { [TELEGRAM_SECRET_HEADER]: SECRET });
    await post(r.app, "{}", { [TELEGRAM_SECRET_HEADER]: "guess-PRESENTED" });
    r.answer("malformed");
    await post(r.app, '{"no_update_id":"PRIVATE-TEXT"}', { [TELEGRAM_SECRET_HEADER]: SECRET });
    expect(refusals()).toHaveLength(3);
    const log = r.raw.join("");
    expect(log).not.toContain("PRIVATE-TEXT");
    expect(log).not.toContain("PRESENTED");
    expect(log).not.toContain(SECRET);
  });

  it("answers 200 once the update is taken, and 503 while shutting down", async () => {
    const auth = { [TELEGRAM_SECRET_HEADER]: SECRET };
    expect((await post(r.app, '{"update_id":5}', auth)).statusCode).toBe(200);
    expect(r.accepted).toEqual([{ raw: '{"update_id":5}', json: { update_id: 5 } }]);
    r.answer("closed");
    expect((await post(r.app, '{"update_id":6}', auth)).statusCode).toBe(503);
  });
});
