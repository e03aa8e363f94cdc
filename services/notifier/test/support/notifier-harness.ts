import { jobRequest, QUEUE } from "@ratatoskr/contracts";
import type { Notification, Prisma, PrismaClient, Repositories } from "@ratatoskr/db";
import { startHost, type AnyServiceDefinition, type RunningHost } from "@ratatoskr/service-host";
import { FakeTelegram } from "@ratatoskr/testkit";
import {
  createTestDatabase,
  createTestRedis,
  type TestDatabase,
  type TestRedis,
  serviceTestEnv,
} from "@ratatoskr/testkit/vitest";
import type { Job } from "bullmq";
import { vi } from "vitest";
import { notifierService } from "../../src/index.ts";

/** Generous for a slow CI machine; never a fixed sleep. */
export const WAIT = { timeout: 15_000, interval: 25 };

export interface HarnessOptions {
  env?: NodeJS.ProcessEnv;
  service?: AnyServiceDefinition;
  /** Share another harness's database, Redis prefix and fake Telegram (a second replica). */
  joining?: NotifierHarness;
}

/**
 * One notifier process (startHost, as main.ts runs it) against a fake Bot API, a Postgres
 * schema and a Redis prefix of its own. Tests create notifications and enqueue notify jobs the
 * way producers do, and read what the chat received from the fake.
 */
export class NotifierHarness {
  private constructor(
    readonly fake: FakeTelegram,
    readonly host: RunningHost,
    readonly database: TestDatabase,
    readonly redis: TestRedis,
    private readonly owner: boolean,
  ) {}

  static async start(options: HarnessOptions = {}): Promise<NotifierHarness> {
    const joining = options.joining;
    const fake = joining?.fake ?? (await new FakeTelegram().start());
    const database = joining?.database ?? (await createTestDatabase());
    const redis = joining?.redis ?? createTestRedis();
    const host = await startHost({
      name: "notifier",
      services: [options.service ?? notifierService],
      env: serviceTestEnv(database, redis, {
        TELEGRAM_BOT_TOKEN: fake.token,
        TELEGRAM_API_ROOT: fake.url,
        ...options.env,
      }),
      handleSignals: false,
    });
    return new NotifierHarness(fake, host, database, redis, joining === undefined);
  }

  get repos(): Repositories {
    return this.host.context.repos;
  }

  get prisma(): PrismaClient {
    return this.database.db.prisma;
  }

  async stop(): Promise<void> {
    await this.host.shutdown("test done");
    if (!this.owner) return;
    await this.fake.stop();
    await this.redis.cleanup();
    await this.database.drop();
  }

  /** A stored message, as ingress creates its replies (the caller enqueues it). */
  message(
    chatId: number,
    template: string,
    params: Prisma.InputJsonObject,
    taskId?: number,
  ): Promise<Notification> {
    return this.repos.notifications.create({
      channel: "telegram",
      chatId,
      template,
      params,
      taskId: taskId ?? null,
    });
  }

  /**
   * Queues the message's notify job carrying its chat, as producers do; `legacy` leaves the chat
   * out, as jobs queued before the field existed did.
   */
  async enqueue(
    notificationId: number,
    jobId = `notification-${notificationId}`,
    { legacy = false }: { legacy?: boolean } = {},
  ): Promise<string> {
    const chatId = legacy ? undefined : (await this.notification(notificationId)).chatId;
    const data = {
      v: 1 as const,
      kind: "message" as const,
      notificationId,
      ...(chatId === undefined || chatId === null ? {} : { chatId: Number(chatId) }),
    };
    await this.host.context.queues.enqueue(jobRequest(QUEUE.notify, data, jobId));
    return jobId;
  }

  /** Waits until the job completed or failed for good, and returns it as it ended. */
  async finished(jobId: string): Promise<Job> {
    return vi.waitFor(async () => {
      // One read: a job fetched before it finished would carry no result.
      const job = await this.host.context.queues.queues.notify.getJob(jobId);
      if (!job?.finishedOn) throw new Error(`job ${jobId} has not finished`);
      return job as Job;
    }, WAIT);
  }

  async notification(id: number): Promise<Notification> {
    const found = await this.repos.notifications.findById(id);
    if (!found) throw new Error(`notification ${id} is gone`);
    return found;
  }

  /** sendMessage calls the fake received for one chat, including refused ones. */
  sendRequests(chatId: number) {
    return this.fake.requests("sendMessage").filter((r) => Number(r.params.chat_id) === chatId);
  }
}
