import { FakeTelegram, startServiceProcess, type ServiceProcess } from "@ratatoskr/testkit";
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from "@ratatoskr/testkit/vitest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

/**
 * The six services as six processes sharing only Redis and Postgres: a Telegram update enters
 * ingress, crosses the `notify` queue and leaves through the notifier, and a SIGTERM'd service
 * exits cleanly.
 */
const SERVICES = ["ingress", "analyst", "dev", "reviewer", "postmortem", "notifier"] as const;
const CHAT_ID = 4242;

let database: TestDatabase;
let redis: TestRedis;
let telegram: FakeTelegram;
const running = new Map<string, ServiceProcess>();

beforeAll(async () => {
  [database, telegram] = await Promise.all([createTestDatabase(), new FakeTelegram().start()]);
  redis = createTestRedis();
  telegram.addChat(CHAT_ID);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    REDIS_URL: redis.url,
    DATABASE_URL: database.connectionString,
    DATABASE_SCHEMA: database.schema,
    QUEUE_PREFIX: redis.prefix,
    LOG_LEVEL: "info",
    SHUTDOWN_TIMEOUT_MS: "5000",
    BULL_BOARD_DISABLED: "true",
    TELEGRAM_BOT_TOKEN: telegram.token,
    TELEGRAM_API_ROOT: telegram.url,
    TELEGRAM_ALLOWED_CHAT_IDS: String(CHAT_ID),
    BOT_LOCALE: "en",
  };
  const started = await Promise.all(SERVICES.map((name) => startServiceProcess(name, { env, timeoutMs: 60_000 })));
  for (const service of started) running.set(service.name, service);
}, 120_000);

afterAll(async () => {
  await Promise.all([...running.values()].map((service) => service.stop("SIGKILL")));
  await telegram?.stop();
  await redis?.cleanup();
  await database?.drop();
});

describe("services as separate processes", () => {
  it("each reports ready on its own health server", async () => {
    for (const service of running.values()) {
      const res = await fetch(`${service.url}/health/ready`);
      expect({ service: service.name, status: res.status }).toEqual({ service: service.name, status: 200 });
    }
  });

  it("carries /start from ingress across the notify queue to the notifier", async () => {
    telegram.sendText(CHAT_ID, "/start");
    const [greeting] = await telegram.waitForMessages(CHAT_ID, 1, { timeoutMs: 20_000 });
    expect(greeting!.plainText).toMatch(/#\d+/);
    // The notifier process (not ingress) sent it: its log names the notify job.
    await vi.waitFor(() => expect(running.get("notifier")!.output()).toMatch(/"service":"notifier".*"queue":"notify"/), {
      timeout: 5_000,
    });
    expect(running.get("ingress")!.output()).not.toMatch(/"queue":"notify"/);
  });

  it("exits 0 on SIGTERM", async () => {
    const notifier = running.get("notifier")!;
    const code = await notifier.stop("SIGTERM");
    running.delete("notifier");
    expect(code).toBe(0);
    expect(notifier.output()).toContain("shutdown finished");
  });
});
