/**
 * The Gitea webhook under load: signed `issue_comment` deliveries (HMAC-SHA256 of the raw body in
 * X-Gitea-Signature), each a new `/agent plan` comment, against the ingress service's real route
 * (startHost as main.ts runs it, with INGRESS_CONCURRENCY=0: an HTTP-only replica, which stores
 * each command and asks for its task with a drain job every 20 ms), side by side with a bare
 * fastify route that checks the same signature and parses the same JSON, both in this process.
 * The intake worker (making the tasks, authorizing every command against the fake Gitea, queuing
 * it) and the fake Gitea run in one child process, the load generator in another: on two cores
 * that work shares the CPU with the route while it is measured, as the floors' requests do not.
 * - latency p50/p99 at a fixed 200 req/s (open loop), aim p99 ≤ 20 ms;
 * - maximum throughput (64 in flight), aim ≥ 0.4× the bare route (issue 22);
 * - p99 against a second floor that makes each delivery durable and nothing more (the bare route
 *   plus one group-committed insert of the delivery into a table of its own): the price of the
 *   commit itself at the machine's current load, apart from what our route and intake add; aim
 *   ≤ 2× (issue 22: ours writes the command once before answering, its task comes after).
 * `pnpm tsx bench/gitea-webhook.ts [--smoke]`
 */
import { Queue } from "bullmq";
import type pg from "pg";
import { Redis } from "ioredis";
import { createHmac, timingSafeEqual } from "node:crypto";
import { createGroupCommit } from "../packages/db/src/index.ts";
import { startHost } from "../packages/service-host/src/index.ts";
import { ingressService } from "../services/ingress/src/index.ts";
import { createLogger, createMetrics, createServiceHttpServer } from "../packages/runtime/src/index.ts";
import { benchDatabase, benchId, deletePrefix, REDIS_URL } from "./lib/bench-env.ts";
import { benchMain, type BenchOptions, type BenchRow } from "./lib/bench-harness.ts";
import { giteaIngressEnv } from "./lib/ingress-env.ts";
import { measureWebhook, startBackend } from "./lib/webhook-load.ts";

const SECRET = "bench-gitea-secret";
const PATH = "/webhooks/gitea";
const REPO = "acme/web";

/** The host's fastify set-up with one route: raw body, the same signature check, JSON.parse, 202. */
async function bareRoute(store?: (deliveryId: string, commentId: number) => Promise<void>) {
  const logger = createLogger({ service: "bare", level: "error" });
  const metrics = createMetrics({ service: "bare", logger, defaultMetrics: false });
  const app = createServiceHttpServer({ service: "bare", checks: {}, metrics, logger });
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer" }, (_req, body, done) => done(null, body));
    scope.post(PATH, async (req, reply) => {
      const raw = req.body as Buffer;
      const given = Buffer.from(String(req.headers["x-gitea-signature"] ?? ""), "hex");
      const expected = createHmac("sha256", SECRET).update(raw).digest();
      if (given.length !== expected.length || !timingSafeEqual(given, expected))
        return reply.code(401).send();
      const commentId = (JSON.parse(raw.toString("utf8")) as { comment: { id: number } }).comment.id;
      await store?.(String(req.headers["x-gitea-delivery"] ?? ""), commentId);
      return reply.code(202).send({ status: "accepted" });
    });
  });
  return { app, url: `${await app.listen({ port: 0, host: "127.0.0.1" })}${PATH}` };
}

/** The bare route plus durability: each delivery group-committed (as ours accepts) into a table nobody reads. */
async function durableRoute(pool: pg.Pool) {
  await pool.query("CREATE TABLE durable_floor (delivery_id text PRIMARY KEY, comment_id bigint NOT NULL)");
  const store = createGroupCommit<{ deliveryId: string; commentId: number }, void>({
    maxBatch: 100,
    maxInFlight: 2,
    write: async (items) => {
      await pool.query({
        name: "bench-gitea-durable-floor",
        text: "INSERT INTO durable_floor SELECT * FROM unnest($1::text[], $2::bigint[]) ON CONFLICT DO NOTHING",
        values: [items.map((i) => i.deliveryId), items.map((i) => String(i.commentId))],
      });
      return items.map(() => Promise.resolve());
    },
  });
  return bareRoute((deliveryId, commentId) => store({ deliveryId, commentId }));
}

/**
 * Waits until the intake worker has caught up with what ours accepted, so the next measurement
 * does not share the machine with the previous one's backlog (bounded: it authorizes each
 * command against the fake Gitea, slower than the route accepts them).
 */
function settled(prefix: string, pool: pg.Pool, deadlineMs = 60_000): () => Promise<void> {
  return async () => {
    const giveUp = performance.now() + deadlineMs;
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const intake = new Queue("intake", { connection, prefix });
    try {
      for (;;) {
        const counts = await intake.getJobCounts("waiting", "active", "prioritized");
        // Stored commands not made into tasks yet are backlog too (their tasks come after the answer).
        const { rows } = await pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM webhook_deliveries WHERE outcome = 'pending'",
        );
        const idle = Object.values(counts).every((n) => n === 0) && rows[0]?.n === 0;
        if (idle || performance.now() > giveUp) return;
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await intake.close();
      connection.disconnect();
    }
  };
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const { db, schema, drop } = await benchDatabase("gitea");
  const prefix = benchId("gitea");
  const bare = await bareRoute();
  const durable = await durableRoute(db.pool);
  const backend = await startBackend({
    kind: "gitea",
    schema,
    prefix,
    secret: SECRET,
    repo: REPO,
    hookUrl: bare.url,
  });
  const { url: giteaUrl, token, template = {} } = backend.ready;
  const host = await startHost({
    name: "ingress",
    services: [ingressService],
    env: giteaIngressEnv({ schema, prefix, giteaUrl, token, secret: SECRET, intake: false }),
    handleSignals: false,
  });
  try {
    return await measureWebhook(options, {
      label: "gitea webhook",
      ours: { kind: "gitea", url: `${host.url}${PATH}`, secret: SECRET, template },
      floor: { kind: "gitea", url: bare.url, secret: SECRET, template },
      rate: 200,
      aim: { p99Ms: 20, minRatio: 0.4, p99VsDurable: 2 },
      floorNote: "floor: bare fastify route, same signature check and JSON",
      settle: settled(prefix, db.pool),
      durableFloor: {
        target: { kind: "gitea", url: durable.url, secret: SECRET, template },
        note: "floor: the bare route plus one group-committed insert of the delivery",
      },
      // Each accepted command is authorized by the intake worker afterwards, far slower than the
      // route accepts: a smaller maximum run keeps the backlog drainable between measurements.
      maxCount: 1000,
    });
  } finally {
    await host.shutdown("bench done");
    await backend.close();
    await bare.app.close();
    await durable.app.close();
    await drop();
    await deletePrefix(prefix);
  }
}

benchMain(import.meta.url, run);
