/**
 * The Telegram webhook under load (issue 7): the whole ingress service (startHost, as main.ts
 * runs it, webhook mode, its real route, inbox and handlers working behind it) against a bare
 * fastify route that parses the same JSON and answers, both over real HTTP in the same process.
 * - latency p50/p99 at a fixed 500 req/s (open loop: requests go out on schedule, not after the
 *   previous answer), aim p99 ≤ 20 ms;
 * - maximum throughput (64 in flight), aim ≥ 30% of the bare route (same fastify set-up).
 * Senders are 200 chats not on the allowlist: every update is stored and handled (parse,
 * allowlist, one refusal per chat), so handling competes with intake as it would in production.
 * `pnpm tsx bench/telegram-webhook.ts [--smoke]`
 */
import { startHost, type RunningHost } from "../packages/service-host/src/index.ts";
import { FakeTelegram } from "../packages/testkit/src/index.ts";
import { ingressService } from "../services/ingress/src/index.ts";
import { createLogger, createMetrics, createServiceHttpServer } from "../packages/runtime/src/index.ts";
import { Agent, request } from "node:http";
import type { AddressInfo } from "node:net";
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

const SECRET = "bench-Secret_0123456789";
const PATH = "/telegram/webhook";
const RATE = 500;
const AIM = { p99Ms: 20, minRatio: 0.3 };

let updateId = 1;
function update(): string {
  const id = updateId++;
  const chat = 900_000 + (id % 200);
  return JSON.stringify({
    update_id: id,
    message: {
      message_id: id,
      date: 1_700_000_000,
      chat: { id: chat, type: "private" },
      from: { id: chat, is_bot: false, first_name: "Bench" },
      text: `message ${id}: please add a health endpoint to acme/api`,
    },
  });
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
              "x-telegram-bot-api-secret-token": SECRET,
            },
          },
          (res) => {
            res.resume();
            res.on("end", () =>
              res.statusCode === 200 ? resolve(200) : reject(new Error(`status ${res.statusCode}`)),
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

/** Open loop at `rate`/s for `count` requests; returns each request's latency in ms. */
async function atRate(
  post: (body: string) => Promise<number>,
  rate: number,
  count: number,
): Promise<number[]> {
  const latencies: number[] = [];
  const started = performance.now();
  const inFlight: Array<Promise<void>> = [];
  for (let i = 0; i < count; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const body = update();
    // Latency from when the request was due, so a stalled sender counts against the server.
    inFlight.push(post(body).then(() => void latencies.push(performance.now() - due)));
  }
  await Promise.all(inFlight);
  return latencies;
}

/** The same fastify set-up the host uses (its health server), with one route that only parses. */
async function bareRoute() {
  const logger = createLogger({ service: "bare", level: "error" });
  const metrics = createMetrics({ service: "bare", logger, defaultMetrics: false });
  const app = createServiceHttpServer({ service: "bare", checks: {}, metrics, logger });
  app.post(PATH, async (req) => {
    void (req.body as { update_id: number }).update_id;
    return { ok: true };
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  return app;
}

async function ingressHost(fake: FakeTelegram, schema: string): Promise<RunningHost> {
  return startHost({
    name: "ingress",
    services: [ingressService],
    env: {
      ...process.env,
      DATABASE_URL,
      DATABASE_SCHEMA: schema,
      REDIS_URL,
      QUEUE_PREFIX: benchId("webhook"),
      LOG_LEVEL: "error",
      HTTP_PORT: "0",
      BULL_BOARD_DISABLED: "true",
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_API_ROOT: fake.url,
      TELEGRAM_ALLOWED_CHAT_IDS: "1",
      TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:9${PATH}`,
      TELEGRAM_WEBHOOK_SECRET: SECRET,
    },
    handleSignals: false,
  });
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const { schema, drop } = await benchDatabase("webhook");
  const fake = await new FakeTelegram().start();
  const host = await ingressHost(fake, schema);
  const bare = await bareRoute();
  const ours = client((host.http.server.address() as AddressInfo).port);
  const floor = client((bare.server.address() as AddressInfo).port);
  try {
    const rateCount = options.smoke ? 50 : RATE * 10;
    const maxCount = options.smoke ? 100 : 4000;
    // Warm-up: connections, JIT, the pool.
    await throughput(options.smoke ? 20 : 500, 16, async () => void (await ours.post(update())));
    await throughput(options.smoke ? 20 : 500, 16, async () => void (await floor.post(update())));
    const latencies = await atRate(ours.post, RATE, rateCount);
    // The same load on the bare route: what this machine and the load generator add by themselves.
    const floorLatencies = await atRate(floor.post, RATE, rateCount);
    const rounds = options.smoke ? 1 : 3;
    const max = await interleave(rounds, {
      ours: () => throughput(maxCount, 64, async () => void (await ours.post(update()))),
      floor: () => throughput(maxCount, 64, async () => void (await floor.post(update()))),
    });
    const p99 = percentile(latencies, 99);
    return [
      {
        measure: `webhook p50 at ${RATE} req/s`,
        ours: percentile(latencies, 50),
        floor: percentile(floorLatencies, 50),
        unit: "ms",
        aim: "—",
        met: null,
      },
      {
        measure: `webhook p99 at ${RATE} req/s`,
        ours: p99,
        floor: percentile(floorLatencies, 99),
        unit: "ms",
        aim: `≤ ${AIM.p99Ms} ms`,
        met: options.smoke ? null : p99 <= AIM.p99Ms,
      },
      ratioRow(options, {
        measure: "webhook max throughput (64 in flight)",
        ours: median(max.ours),
        floor: median(max.floor),
        unit: "req/s",
        minRatio: AIM.minRatio,
        note: "floor: bare fastify route, same JSON",
      }),
    ];
  } finally {
    ours.close();
    floor.close();
    await bare.close();
    await host.shutdown("bench done");
    await fake.stop();
    await drop();
  }
}

benchMain(import.meta.url, run);
