import { JOB_CATALOG, notificationJobId, QUEUE } from "@ratatoskr/contracts";
import { FakeTelegram, startServiceProcess, type ServiceProcess } from "@ratatoskr/testkit";
import {
  createTestDatabase,
  createTestRedis,
  serviceTestEnv,
  QUICK_JOB_LOCKS,
  type TestDatabase,
  type TestRedis,
} from "@ratatoskr/testkit/vitest";
import { createRepositories, type Repositories } from "@ratatoskr/db";
import { createLogger, createRedisConnection, type Redis } from "@ratatoskr/runtime";
import { Queue } from "bullmq";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";

/**
 * The notifier as its own process, killed with SIGKILL while a message is in flight (Telegram
 * delivered it and has not answered yet), then a fresh process: what the chat receives.
 */
let database: TestDatabase;
let redis: TestRedis;
let fake: FakeTelegram;
let queue: Queue;
let repos: Repositories;
/** Reads the chat leases the notifier processes hold. */
let client: Redis;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  redis = createTestRedis();
  fake = await new FakeTelegram().start();
  repos = createRepositories(database.db.prisma);
  client = createRedisConnection(redis.url, "worker", {
    logger: createLogger({ service: "notifier-kill-test", level: "silent" }),
  });
  queue = new Queue(QUEUE.notify, { connection: { url: redis.url }, prefix: redis.prefix });
});
afterEach(async () => {
  for (const p of processes.splice(0)) await p.stop("SIGKILL");
});
afterAll(async () => {
  client.disconnect();
  await queue.close();
  await fake.stop();
  await redis.cleanup();
  await database.drop();
});

async function startNotifier(extraEnv: NodeJS.ProcessEnv = {}): Promise<ServiceProcess> {
  const env = serviceTestEnv(database, redis, {
    PATH: process.env.PATH,
    TELEGRAM_BOT_TOKEN: fake.token,
    TELEGRAM_API_ROOT: fake.url,
    // The "started" line is how the harness knows the process is up.
    LOG_LEVEL: "info",
    ...QUICK_JOB_LOCKS,
    ...extraEnv,
  });
  const started = await startServiceProcess("notifier", { env, timeoutMs: 60_000 });
  processes.push(started);
  return started;
}

const command = (text: string) => /\/m\d+/.exec(text)?.[0];

describe("notifier killed mid-send", () => {
  it("loses nothing, resends nothing that may have arrived, and frees the chat within seconds", async () => {
    const chatId = 8_001;
    fake.addChat(chatId);
    const first = await startNotifier();
    const ids: number[] = [];
    for (let n = 1; n <= 10; n++) {
      const stored = await repos.notifications.create({
        channel: "telegram",
        chatId,
        template: "bot.unknown-command",
        params: { command: `/m${n}` },
      });
      ids.push(stored.id);
    }
    for (const notificationId of ids) {
      const data = { v: 1, kind: "message", notificationId };
      await queue.add(JOB_CATALOG[QUEUE.notify].jobName, data, { jobId: notificationJobId(notificationId) });
    }
    // Three go out; the fourth reaches the chat, but its answer never comes back to this process.
    // (Armed once the third is recorded as sent: its own answer has gone out by then.)
    await vi.waitFor(async () => expect((await repos.notifications.findById(ids[2]!))?.status).toBe("sent"), {
      timeout: 30_000,
      interval: 20,
    });
    fake.answerLate("sendMessage", 120_000);
    await fake.waitForMessages(chatId, 4, { timeoutMs: 30_000 });
    await first.stop("SIGKILL");
    const killedAt = Date.now();

    await startNotifier();
    const all = await fake.waitForMessages(chatId, 10, { timeoutMs: 60_000 });
    const resumedAfterMs = (all[4]?.time ?? Infinity) - killedAt;

    // Each message in the chat exactly once, in order; the one in flight is not sent again.
    expect(all.map((r) => command(r.plainText))).toEqual(Array.from({ length: 10 }, (_, i) => `/m${i + 1}`));
    await vi.waitFor(
      async () => {
        const rows = await Promise.all(ids.map((id) => repos.notifications.findById(id)));
        expect(rows.map((row) => row?.status)).toEqual([
          "sent",
          "sent",
          "sent",
          "uncertain",
          ...Array.from({ length: 6 }, () => "sent"),
        ]);
      },
      { timeout: 15_000, interval: 100 },
    );
    // The chat was blocked for a lease and a restart, not 45 s.
    expect(resumedAfterMs).toBeLessThan(20_000);
  }, 180_000);

  it("settles a lone message left mid-send within seconds, though no later job comes for its chat", async () => {
    const [asked, told] = [8_002, 8_003];
    fake.addChat(asked);
    fake.addChat(told);
    const first = await startNotifier();
    const question = await repos.notifications.create({
      channel: "telegram",
      chatId: asked,
      template: "task.questions",
      params: { taskId: 5, questions: ["Which branch?"] },
    });
    const notice = await repos.notifications.create({
      channel: "telegram",
      chatId: told,
      template: "bot.unknown-command",
      params: { command: "/lone" },
    });
    // Both reach their chats; neither answer comes back before the process dies.
    fake.answerLate("sendMessage", 120_000, 2);
    for (const { id: notificationId } of [question, notice]) {
      const data = { v: 1, kind: "message", notificationId };
      await queue.add(JOB_CATALOG[QUEUE.notify].jobName, data, { jobId: notificationJobId(notificationId) });
    }
    await fake.waitForMessages(asked, 1, { timeoutMs: 30_000 });
    await fake.waitForMessages(told, 1, { timeoutMs: 30_000 });
    await first.stop("SIGKILL");

    await startNotifier();
    const restartedAt = Date.now();
    // The question the dialogue waits on comes once more, marked; the notice is never repeated.
    const [, resent] = await fake.waitForMessages(asked, 2, { timeoutMs: 60_000 });
    expect(resent?.plainText.startsWith("(resent)\n")).toBe(true);
    await vi.waitFor(
      async () => {
        expect((await repos.notifications.findById(question.id))?.status).toBe("sent");
        expect((await repos.notifications.findById(notice.id))?.status).toBe("uncertain");
      },
      { timeout: 60_000, interval: 50 },
    );
    // Settled by the fresh process within seconds of its start (the dead one's lease is 4 s), not
    // after BullMQ's stall detection gives the job back (15 s lock, two stalled checks 10 s apart).
    expect(Date.now() - restartedAt).toBeLessThan(8_000);
    expect(fake.sent(told)).toHaveLength(1);
  }, 180_000);

  it("sends a message whose job died with its notifier before claiming it within seconds, and once", async () => {
    const chatId = 8_004;
    fake.addChat(chatId);
    // A long chat interval, so the job of the second message holds the chat, waiting for its slot.
    const first = await startNotifier({ NOTIFIER_CHAT_INTERVAL_MS: "3000" });
    const store = (command: string) =>
      repos.notifications.create({
        channel: "telegram",
        chatId,
        template: "bot.unknown-command",
        params: { command },
      });
    const enqueue = (notificationId: number) =>
      queue.add(
        JOB_CATALOG[QUEUE.notify].jobName,
        { v: 1, kind: "message", notificationId, chatId },
        { jobId: notificationJobId(notificationId) },
      );
    const leaseKey = `${redis.prefix}:notifier:chat-lock:${chatId}`;
    const opening = await store("/m101");
    await enqueue(opening.id);
    await fake.waitForMessages(chatId, 1, { timeoutMs: 30_000 });
    await vi.waitFor(async () => expect(await client.exists(leaseKey)).toBe(0), {
      timeout: 15_000,
      interval: 20,
    });
    const waiting = await store("/m102");
    await enqueue(waiting.id);
    // Its job took the chat and waits for the slot: the message is still pending, never claimed.
    await vi.waitFor(async () => expect(await client.exists(leaseKey)).toBe(1), {
      timeout: 15_000,
      interval: 20,
    });
    await first.stop("SIGKILL");
    expect(await repos.notifications.findById(waiting.id)).toMatchObject({ status: "pending", attempts: 0 });
    expect(await (await queue.getJob(notificationJobId(waiting.id)))?.getState()).toBe("active");

    await startNotifier();
    const restartedAt = Date.now();
    await fake.waitForMessages(chatId, 2, { timeoutMs: 60_000 });
    // Sent by the fresh process's sweep once the dead one's lease (4 s) is gone, not when BullMQ
    // hands the job back (15 s lock, a stalled check every 10 s).
    expect(Date.now() - restartedAt).toBeLessThan(8_000);
    // The dead process's job, given back later, finds the message sent: never a second copy.
    await vi.waitFor(
      async () => {
        const job = await queue.getJob(notificationJobId(waiting.id));
        expect(job?.finishedOn).toBeDefined();
      },
      { timeout: 90_000, interval: 200 },
    );
    expect(fake.sent(chatId).map((m) => command(m.plainText))).toEqual(["/m101", "/m102"]);
    expect(await repos.notifications.findById(waiting.id)).toMatchObject({ status: "sent" });
  }, 180_000);
});
