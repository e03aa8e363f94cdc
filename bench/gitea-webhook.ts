/**
 * The Gitea webhook under load: signed `issue_comment` deliveries (HMAC-SHA256 of the raw body in
 * X-Gitea-Signature), each a new `/agent plan` comment, against the whole ingress service
 * (startHost, as main.ts runs it, the real route storing the command and the intake worker
 * authorizing it against a fake Gitea behind it), side by side with a bare fastify route that
 * checks the same signature and parses the same JSON, both over real HTTP in the same process.
 * - latency p50/p99 at a fixed 200 req/s (open loop), aim p99 ≤ 20 ms;
 * - maximum throughput (64 in flight), aim ≥ 30% of the bare route.
 * `pnpm tsx bench/gitea-webhook.ts [--smoke]`
 */
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { createHmac, timingSafeEqual } from "node:crypto";
import { Agent, request } from "node:http";
import type { AddressInfo } from "node:net";
import { startHost, type RunningHost } from "../packages/service-host/src/index.ts";
import { FakeGitea } from "../packages/testkit/src/index.ts";
import { ingressService } from "../services/ingress/src/index.ts";
import { createLogger, createMetrics, createServiceHttpServer } from "../packages/runtime/src/index.ts";
import { benchDatabase, benchId, DATABASE_URL, REDIS_URL } from "./lib/bench-env.ts";
import {
  benchMain,
  interleave,
  median,
  percentile,
  ratioRow,
  throughput,
  type BenchOptions,
  type BenchRow,
} from "./lib/bench-harness.ts";

const SECRET = "bench-gitea-secret";
const PATH = "/webhooks/gitea";
const REPO = "acme/web";
const RATE = 200;
const AIM = { p99Ms: 20, minRatio: 0.3 };

const sign = (body: string) => createHmac("sha256", SECRET).update(body).digest("hex");

/** Deliveries built from one real fake-Gitea payload, each with a new comment id. */
function deliveries(template: Record<string, unknown>) {
  let next = 1_000_000;
  const comment = template["comment"] as Record<string, unknown>;
  return (): string => {
    const id = next++;
    return JSON.stringify({ ...template, comment: { ...comment, id, body: `/agent plan bench ${id}` } });
  };
}

function client(port: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: 128 });
  return {
    post(body: string): Promise<number> {
      return new Promise((resolve, reject) => {
        const req = request(
          {
            agent,
            port,
            host: "127.0.0.1",
            method: "POST",
            path: PATH,
            headers: {
              "content-type": "application/json",
              "content-length": Buffer.byteLength(body),
              "x-gitea-event": "issue_comment",
              "x-gitea-signature": sign(body),
            },
          },
          (res) => {
            res.resume();
            res.on("end", () =>
              res.statusCode === 202 || res.statusCode === 200
                ? resolve(res.statusCode)
                : reject(new Error(`status ${res.statusCode}`)),
            );
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    },
    close: () => agent.destroy(),
  };
}

/** Open loop at `rate`/s for `count` requests; each latency counted from when it was due. */
async function atRate(post: () => Promise<number>, rate: number, count: number): Promise<number[]> {
  const latencies: number[] = [];
  const started = performance.now();
  const inFlight: Array<Promise<void>> = [];
  for (let i = 0; i < count; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inFlight.push(post().then(() => void latencies.push(performance.now() - due)));
  }
  await Promise.all(inFlight);
  return latencies;
}

/** The host's fastify set-up with one route: raw body, the same signature check, JSON.parse, 202. */
async function bareRoute() {
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
      void (JSON.parse(raw.toString("utf8")) as { comment: { id: number } }).comment.id;
      return reply.code(202).send({ status: "accepted" });
    });
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  return app;
}

/**
 * Waits until the intake worker has caught up with what `ours` accepted, so the next measurement
 * (ours or the floor, same process) does not share the CPU with the previous one's backlog.
 */
async function settled(prefix: string, deadlineMs = 60_000): Promise<void> {
  const giveUp = performance.now() + deadlineMs;
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const intake = new Queue("intake", { connection, prefix });
  try {
    for (;;) {
      const counts = await intake.getJobCounts("waiting", "active", "prioritized");
      if (Object.values(counts).every((n) => n === 0)) return;
      // The intake worker authorizes each command against Gitea (~60/s here): do not wait forever.
      if (performance.now() > giveUp) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await intake.close();
    connection.disconnect();
  }
}

async function ingressHost(gitea: FakeGitea, schema: string, prefix: string): Promise<RunningHost> {
  return startHost({
    name: "ingress",
    services: [ingressService],
    env: {
      ...process.env,
      DATABASE_URL,
      DATABASE_SCHEMA: schema,
      REDIS_URL,
      QUEUE_PREFIX: prefix,
      LOG_LEVEL: "error",
      HTTP_PORT: "0",
      BULL_BOARD_DISABLED: "true",
      GITEA_URL: gitea.url,
      GITEA_TOKEN: gitea.token,
      GITEA_WEBHOOK_SECRET: SECRET,
      GITEA_SWEEP_INTERVAL_MS: "0",
      GITEA_STATUS_REFRESH_MS: "0",
    },
    handleSignals: false,
  });
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const { schema, drop } = await benchDatabase("gitea");
  const gitea = await new FakeGitea().start();
  gitea.addRepo(REPO);
  gitea.setPermission(REPO, "alice", "write");
  const issue = gitea.addIssue(REPO, "bench");
  const bare = await bareRoute();
  const bareUrl = `http://127.0.0.1:${(bare.server.address() as AddressInfo).port}${PATH}`;
  // One real delivery, to the bare route, is the template for every bench delivery.
  gitea.addWebhook(bareUrl, SECRET);
  const { deliveries: sent } = await gitea.comment(REPO, issue.number ?? 1, "alice", "/agent plan bench");
  const next = deliveries(JSON.parse(sent[0]?.body ?? "{}") as Record<string, unknown>);
  const prefix = benchId("gitea");
  const host = await ingressHost(gitea, schema, prefix);
  const ours = client((host.http.server.address() as AddressInfo).port);
  const floor = client((bare.server.address() as AddressInfo).port);
  const postOurs = () => ours.post(next());
  const postFloor = () => floor.post(next());
  try {
    const rateCount = options.smoke ? 40 : RATE * 5;
    const maxCount = options.smoke ? 100 : 1000;
    await throughput(options.smoke ? 20 : 300, 16, async () => void (await postOurs()));
    await throughput(options.smoke ? 20 : 300, 16, async () => void (await postFloor()));
    await settled(prefix);
    const floorLatencies = await atRate(postFloor, RATE, rateCount);
    // Ours includes its intake worker keeping up (as in production); the floor has none.
    const latencies = await atRate(postOurs, RATE, rateCount);
    await settled(prefix);
    const max = await interleave(options.smoke ? 1 : 3, {
      ours: async () => {
        const rate = await throughput(maxCount, 64, async () => void (await postOurs()));
        await settled(prefix);
        return rate;
      },
      floor: () => throughput(maxCount, 64, async () => void (await postFloor())),
    });
    const p99 = percentile(latencies, 99);
    return [
      {
        measure: `gitea webhook p50 at ${RATE} req/s`,
        ours: percentile(latencies, 50),
        floor: percentile(floorLatencies, 50),
        unit: "ms",
        aim: "—",
        met: null,
      },
      {
        measure: `gitea webhook p99 at ${RATE} req/s`,
        ours: p99,
        floor: percentile(floorLatencies, 99),
        unit: "ms",
        aim: `≤ ${AIM.p99Ms} ms`,
        met: options.smoke ? null : p99 <= AIM.p99Ms,
      },
      ratioRow(options, {
        measure: "gitea webhook max throughput (64 in flight)",
        ours: median(max.ours),
        floor: median(max.floor),
        unit: "req/s",
        minRatio: AIM.minRatio,
        note: "floor: bare fastify route, same signature check and JSON",
      }),
    ];
  } finally {
    ours.close();
    floor.close();
    await host.shutdown("bench done");
    await bare.close();
    await gitea.stop();
    await drop();
  }
}

benchMain(import.meta.url, run);
