import { ConfigError } from "@ratatoskr/runtime";
import { startHost } from "@ratatoskr/service-host";
import { FakeTelegram } from "@ratatoskr/testkit";
import {
  createTestDatabase,
  createTestRedis,
  type TestDatabase,
  type TestRedis,
  serviceTestEnv,
} from "@ratatoskr/testkit/vitest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ingressService } from "../src/index.ts";
import { IngressHarness } from "./support/ingress-harness.ts";

const CHAT = 5001;
const SECRET = "wh-Secret_0123456789";
const WEBHOOK_PATH = "/telegram/webhook";

/** A Bot API update as Telegram posts it. */
function startUpdate(updateId: number, chatId: number) {
  return {
    update_id: updateId,
    message: {
      message_id: updateId,
      date: 1_700_000_000,
      chat: { id: chatId, type: "private" },
      from: { id: chatId, is_bot: false, first_name: "Ann" },
      text: "/start",
      entities: [{ type: "bot_command", offset: 0, length: 6 }],
    },
  };
}

describe("webhook mode", () => {
  let h: IngressHarness;

  beforeAll(async () => {
    h = await IngressHarness.start({
      TELEGRAM_ALLOWED_CHAT_IDS: String(CHAT),
      // Nothing listens on port 9: the test posts updates itself with inject().
      TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:9${WEBHOOK_PATH}`,
      TELEGRAM_WEBHOOK_SECRET: SECRET,
    });
  });
  afterAll(async () => {
    await h?.stop();
  });

  const post = (body: unknown, secret?: string) =>
    h.host.http.inject({
      method: "POST",
      url: WEBHOOK_PATH,
      payload: body as object,
      headers: secret === undefined ? {} : { "x-telegram-bot-api-secret-token": secret },
    });

  it("sets the webhook with its secret at start and does not poll", () => {
    expect(h.fake.webhookInfo().url).toBe(`http://127.0.0.1:9${WEBHOOK_PATH}`);
    expect(h.fake.requests("setWebhook").at(-1)?.params).toMatchObject({ secret_token: SECRET });
    expect(h.fake.requests("getUpdates")).toEqual([]);
    expect(h.fake.commands()).toHaveLength(8);
  });

  it("answers 401 to a missing or wrong secret and handles nothing", async () => {
    expect((await post(startUpdate(1, CHAT))).statusCode).toBe(401);
    expect((await post(startUpdate(2, CHAT), "wrong")).statusCode).toBe(401);
    expect((await post(startUpdate(3, CHAT), `${SECRET}x`)).statusCode).toBe(401);
    expect(await h.tasks(CHAT)).toEqual([]);
  });

  it("stores an update with the right secret, answers 200, and handles it right after", async () => {
    const response = await post(startUpdate(4, CHAT), SECRET);
    expect(response.statusCode).toBe(200);
    // The answer goes out once the update is stored; handling follows.
    expect(await h.prisma.telegramUpdate.count({ where: { updateId: 4 } })).toBe(1);
    await h.inboxDrained();
    const task = await h.onlyTask(CHAT);
    expect((await h.notifications(CHAT, "bot.greeting")).map((n) => n.params)).toEqual([{ taskId: task.id }]);
  });

  it("answers 400 to a malformed update", async () => {
    const response = await post({ message: { text: "no update id" } }, SECRET);
    expect(response.statusCode).toBe(400);
  });
});

describe("polling lifecycle", () => {
  it("confirms the handled updates on shutdown, so a restart does not replay them", async () => {
    const h = await IngressHarness.start({ TELEGRAM_ALLOWED_CHAT_IDS: String(CHAT) });
    try {
      h.say(CHAT, "/start");
      await h.waitForNotification(CHAT, "bot.greeting");
    } finally {
      await h.stop();
    }
    expect(h.fake.requests("deleteWebhook")).toHaveLength(1);
    expect(h.fake.requests("getUpdates").at(-1)?.params).toMatchObject({ offset: 2, limit: 1 });
  });
});

describe("polling through a database blip", () => {
  it("retries a failed update in its chat's slot, so neither it nor the next one is lost or reordered", async () => {
    const h = await IngressHarness.start({ TELEGRAM_ALLOWED_CHAT_IDS: String(CHAT) });
    try {
      // Postgres is away for the first lookup of the chat's task (the handler's first query).
      const tasks = h.host.context.repos.tasks;
      const real = tasks.findActiveByChat.bind(tasks);
      let failures = 0;
      tasks.findActiveByChat = async (chatId) => {
        if (failures === 0) {
          failures += 1;
          throw new Error("Connection terminated unexpectedly");
        }
        return real(chatId);
      };
      h.say(CHAT, "Add a health endpoint to acme/api");
      h.say(CHAT, "and a readiness one");
      const task = await vi.waitFor(() => h.onlyTask(CHAT), { timeout: 10_000 });
      await vi.waitFor(
        async () => {
          const turns = await h.host.context.repos.turns.list(task.id);
          expect(turns.map((t) => t.text)).toEqual([
            "Add a health endpoint to acme/api",
            "and a readiness one",
          ]);
        },
        { timeout: 10_000 },
      );
      expect(failures).toBe(1);
    } finally {
      await h.stop();
    }
  });
});

describe("configuration", () => {
  let database: TestDatabase;
  let redis: TestRedis;
  let fake: FakeTelegram;

  beforeAll(async () => {
    database = await createTestDatabase();
    redis = createTestRedis();
    fake = await new FakeTelegram().start();
  });
  afterAll(async () => {
    await fake?.stop();
    await redis?.cleanup();
    await database?.drop();
  });

  const env = (extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv =>
    serviceTestEnv(database, redis, { BULL_BOARD_DISABLED: "true", ...extra });
  const start = (extra: NodeJS.ProcessEnv) =>
    startHost({ name: "ingress", services: [ingressService], env: env(extra), handleSignals: false });

  it("starts without a token, with the Telegram front door off", async () => {
    const host = await start({ TELEGRAM_API_ROOT: fake.url });
    try {
      expect((await fetch(`${host.url}/health/ready`)).status).toBe(200);
      expect(fake.requests()).toEqual([]);
    } finally {
      await host.shutdown();
    }
  });

  it("refuses a token without an allowlist, and a webhook without a secret, naming each", async () => {
    const failure = await start({
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_API_ROOT: fake.url,
      TELEGRAM_WEBHOOK_URL: "https://bot.example.com/telegram/webhook",
    }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as ConfigError).problems.map((p) => p.name)).toEqual([
      "TELEGRAM_ALLOWED_CHAT_IDS",
      "TELEGRAM_WEBHOOK_SECRET",
    ]);
    expect(fake.requests()).toEqual([]);
  });
});
