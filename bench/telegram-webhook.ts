/**
 * The Telegram webhook under load (issue 7): the whole ingress service (startHost, as main.ts
 * runs it, webhook mode, its real route, inbox and handlers working behind it) against a bare
 * fastify route that parses the same JSON and answers, both in this process; the load comes from
 * a separate process and the fake Telegram runs in another.
 * - latency p50/p99 at a fixed 500 req/s (open loop), aim p99 ≤ 20 ms;
 * - maximum throughput (64 in flight), aim ≥ 30% of the bare route (same fastify set-up);
 * - p99 against a second floor that only makes each update durable as ours does (the same group
 *   commit, one insert into a table of its own): what our route adds beyond the commit itself.
 * Senders are 200 chats not on the allowlist: every update is stored and handled (parse,
 * allowlist, one refusal per chat), so handling competes with intake as it would in production.
 * `pnpm tsx bench/telegram-webhook.ts [--smoke]`
 */
import type pg from "pg";
import { startHost } from "../packages/service-host/src/index.ts";
import { ingressService } from "../services/ingress/src/index.ts";
import { createUpdateBatcher } from "../services/ingress/src/telegram/delivery/update-batcher.ts";
import { createLogger, createMetrics, createServiceHttpServer } from "../packages/runtime/src/index.ts";
import { benchDatabase, benchId, deletePrefix } from "./lib/bench-env.ts";
import { benchMain, type BenchOptions, type BenchRow } from "./lib/bench-harness.ts";
import { telegramIngressEnv } from "./lib/ingress-env.ts";
import { measureWebhook, startBackend } from "./lib/webhook-load.ts";

const SECRET = "bench-Secret_0123456789";
const PATH = "/telegram/webhook";

/** The same fastify set-up the host uses (its health server), with one route that only parses. */
async function bareRoute() {
  const logger = createLogger({ service: "bare", level: "error" });
  const metrics = createMetrics({ service: "bare", logger, defaultMetrics: false });
  const app = createServiceHttpServer({ service: "bare", checks: {}, metrics, logger });
  app.post(PATH, async (req) => {
    void (req.body as { update_id: number }).update_id;
    return { ok: true };
  });
  return { app, url: `${await app.listen({ port: 0, host: "127.0.0.1" })}${PATH}` };
}

/** The bare route plus durability: each update group-committed into a table nobody reads. */
async function durableRoute(pool: pg.Pool) {
  await pool.query("CREATE TABLE durable_floor (update_id bigint PRIMARY KEY, payload text NOT NULL)");
  const storeUpdate = createUpdateBatcher(async (updates) => {
    const result = await pool.query({
      name: "bench-durable-floor",
      text: `INSERT INTO durable_floor SELECT * FROM unnest($1::bigint[], $2::text[]) ON CONFLICT DO NOTHING`,
      values: [updates.map((u) => String(u.updateId)), updates.map((u) => u.payload)],
    });
    return result.rowCount ?? 0;
  });
  const logger = createLogger({ service: "durable", level: "error" });
  const metrics = createMetrics({ service: "durable", logger, defaultMetrics: false });
  const app = createServiceHttpServer({ service: "durable", checks: {}, metrics, logger });
  app.post(PATH, async (req) => {
    const body = req.body as { update_id: number };
    await storeUpdate({ updateId: body.update_id, chatId: null, payload: JSON.stringify(body) });
    return { ok: true };
  });
  return { app, url: `${await app.listen({ port: 0, host: "127.0.0.1" })}${PATH}` };
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const { db, schema, drop } = await benchDatabase("webhook");
  const telegram = await startBackend({ kind: "telegram" });
  const prefix = benchId("webhook");
  const host = await startHost({
    name: "ingress",
    services: [ingressService],
    env: telegramIngressEnv({
      schema,
      prefix,
      telegramUrl: telegram.ready.url,
      token: telegram.ready.token,
      path: PATH,
      secret: SECRET,
    }),
    handleSignals: false,
  });
  const bare = await bareRoute();
  const durable = await durableRoute(db.pool);
  try {
    return await measureWebhook(options, {
      label: "telegram webhook",
      ours: { kind: "telegram", url: `${host.url}${PATH}`, secret: SECRET },
      floor: { kind: "telegram", url: bare.url, secret: SECRET },
      rate: 500,
      aim: { p99Ms: 20, minRatio: 0.3 },
      floorNote: "floor: bare fastify route, same JSON",
      durableFloor: {
        target: { kind: "telegram", url: durable.url, secret: SECRET },
        note: "floor: the bare route plus one group-committed insert per update",
      },
    });
  } finally {
    await durable.app.close();
    await bare.app.close();
    await host.shutdown("bench done");
    await telegram.close();
    await drop();
    await deletePrefix(prefix);
  }
}

benchMain(import.meta.url, run);
