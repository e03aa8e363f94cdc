/**
 * The notifier with pacing opened up: one stored message to each of 2,000 chats, their notify
 * jobs queued, then the time until the fake Telegram has every message — against a floor in the
 * same run: raw BullMQ jobs carrying the text, a worker relaying each to the same fake Telegram
 * with telegraf, same concurrency. Ours pays for what the floor has not: the send record in
 * Postgres (claim before, result after), the chat lease, the pacer and rendering. Ours queues
 * the jobs as the outbox dispatcher queues a burst: v2 jobs of up to 32 messages
 * (notifyMessagesJobs), so a job, a lease call and a claim statement serve many messages; a
 * second row measures v1 jobs, one per message (what single producers and old jobs are).
 * `pnpm tsx bench/notifier-throughput.ts [--smoke]` (BENCH_NOTIFIER_CHATS, BENCH_ROUNDS: 2,000 and 3 by default)
 */
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { Telegram } from "telegraf";
import {
  JOB_CATALOG,
  notificationJobId,
  notifyMessagesJobs,
  QUEUE,
} from "../packages/contracts/src/index.ts";
import { createRepositories } from "../packages/db/src/index.ts";
import { startHost } from "../packages/service-host/src/index.ts";
import { FakeTelegram } from "../packages/testkit/src/index.ts";
import { notifierService } from "../services/notifier/src/index.ts";
import { benchDatabase, benchId, DATABASE_URL, REDIS_URL } from "./lib/bench-env.ts";
import {
  benchMain,
  interleave,
  median,
  ratioRow,
  type BenchOptions,
  type BenchRow,
} from "./lib/bench-harness.ts";

/** The notifier's default NOTIFIER_CONCURRENCY; the floor's worker gets the same. */
const CONCURRENCY = 8;

/** This process's CPU time (user + system) since `from`, in µs. */
function cpuMicros(from: NodeJS.CpuUsage): number {
  const { user, system } = process.cpuUsage(from);
  return user + system;
}

async function until(done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function run(options: BenchOptions): Promise<BenchRow[]> {
  const chats = options.smoke ? 50 : Number(process.env["BENCH_NOTIFIER_CHATS"] ?? 2_000);
  const rounds = options.smoke ? 1 : Number(process.env["BENCH_ROUNDS"] ?? 3);
  const fake = await new FakeTelegram().start();
  const database = await benchDatabase("notifier");
  const repos = createRepositories(database.db.prisma);
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const cpuPerMessage = { ours: [] as number[], v1: [] as number[], floor: [] as number[] };
  let round = 0;
  /** Fresh chat ids per run: no chat is held back by its own interval from an earlier run. */
  const chatIds = () => {
    round += 1;
    return Array.from({ length: chats }, (_, i) => round * 100_000 + i + 1);
  };
  /** Messages the fake received since `from` (one read of its log; a per-chat scan would starve the loop). */
  const sentSince = (from: number) => fake.sent().length - from;

  try {
    /** Our notifier over fresh chats: v2 packs (`packed`) or one v1 job per message. */
    const ours = async (packed: boolean) => {
      const ids = chatIds();
      const prefix = benchId("notifier");
      const stored: Array<{ notificationId: number; chatId: number }> = [];
      for (const chatId of ids) {
        fake.addChat(chatId);
        const n = await repos.notifications.create({
          channel: "telegram",
          chatId,
          template: "bot.unknown-command",
          params: { command: `/c${chatId}` },
        });
        stored.push({ notificationId: n.id, chatId });
      }
      const host = await startHost({
        name: "notifier",
        services: [notifierService],
        handleSignals: false,
        env: {
          REDIS_URL,
          DATABASE_URL,
          DATABASE_SCHEMA: database.schema,
          QUEUE_PREFIX: prefix,
          HTTP_HOST: "127.0.0.1",
          HTTP_PORT: "0",
          LOG_LEVEL: process.env["BENCH_LOG_LEVEL"] ?? "warn",
          TELEGRAM_BOT_TOKEN: fake.token,
          TELEGRAM_API_ROOT: fake.url,
          NOTIFIER_CONCURRENCY: String(CONCURRENCY),
          NOTIFIER_GLOBAL_PER_SECOND: "1000000",
        },
      });
      const queue = new Queue(QUEUE.notify, { connection, prefix });
      const jobs = packed
        ? notifyMessagesJobs(stored).map((job) => ({
            name: JOB_CATALOG[QUEUE.notify].jobName,
            data: job.data,
            opts: { jobId: job.jobId },
          }))
        : stored.map(({ notificationId, chatId }) => ({
            name: JOB_CATALOG[QUEUE.notify].jobName,
            data: { v: 1, kind: "message", notificationId, chatId },
            opts: { jobId: notificationJobId(notificationId) },
          }));
      const before = fake.sent().length;
      const cpu = process.cpuUsage();
      const started = performance.now();
      await queue.addBulk(jobs);
      await until(() => sentSince(before) >= chats, 300_000);
      const rate = (chats * 1000) / (performance.now() - started);
      cpuPerMessage[packed ? "ours" : "v1"].push(cpuMicros(cpu) / chats);
      await host.shutdown("bench done");
      await queue.obliterate({ force: true });
      await queue.close();
      return rate;
    };
    const results = await interleave(rounds, {
      ours: () => ours(true),
      v1: () => ours(false),
      floor: async () => {
        const ids = chatIds();
        const prefix = benchId("notifier");
        for (const chatId of ids) fake.addChat(chatId);
        const telegram = new Telegram(fake.token, { apiRoot: fake.url });
        const worker = new Worker(
          "relay",
          async (job) => {
            const { chatId, text } = job.data as { chatId: number; text: string };
            await telegram.sendMessage(chatId, text, { parse_mode: "HTML" });
          },
          {
            connection: new Redis(REDIS_URL, { maxRetriesPerRequest: null }),
            prefix,
            concurrency: CONCURRENCY,
          },
        );
        const queue = new Queue("relay", { connection, prefix });
        const before = fake.sent().length;
        const cpu = process.cpuUsage();
        const started = performance.now();
        await queue.addBulk(
          ids.map((chatId) => ({
            name: "relay",
            data: { chatId, text: `I don't know the command /c${chatId}.` },
            opts: { jobId: `relay-${chatId}`, removeOnComplete: 1000 },
          })),
        );
        await until(() => sentSince(before) >= chats, 300_000);
        const rate = (chats * 1000) / (performance.now() - started);
        cpuPerMessage.floor.push(cpuMicros(cpu) / chats);
        await worker.close();
        await queue.obliterate({ force: true });
        await queue.close();
        return rate;
      },
    });
    const cpu = (k: keyof typeof cpuPerMessage) => Math.round(median(cpuPerMessage[k]));
    return [
      ratioRow(options, {
        measure: `notifier, ${chats} chats, pacing opened up (concurrency ${CONCURRENCY})`,
        ours: median(results.ours),
        floor: median(results.floor),
        unit: "msg/s",
        minRatio: 0.5,
        note:
          "floor: raw BullMQ → telegraf relay to the same fake Telegram, one job a message; ours: v2 jobs of up to 32 " +
          "messages as the outbox dispatcher packs a burst, logging at warn. CPU of this process per message (fake " +
          "Telegram included, so less swayed by the machine's load): " +
          `ours ${cpu("ours")} µs, floor ${cpu("floor")} µs`,
      }),
      ratioRow(options, {
        measure: `notifier, ${chats} chats, one v1 job a message (concurrency ${CONCURRENCY})`,
        ours: median(results.v1),
        floor: median(results.floor),
        unit: "msg/s",
        note: `what single producers and jobs queued before v2 get; CPU per message ${cpu("v1")} µs`,
      }),
    ];
  } finally {
    connection.disconnect();
    await fake.stop();
    await database.drop();
  }
}

benchMain(import.meta.url, run);
