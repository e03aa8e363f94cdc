import { formatCallbackData, type JobData, type QueueName, type TaskEvent } from "@ratatoskr/contracts";
import type { Notification, PrismaClient, Task } from "@ratatoskr/db";
import { startHost, type RunningHost } from "@ratatoskr/service-host";
import { FakeTelegram } from "@ratatoskr/testkit";
import {
  createTestDatabase,
  createTestRedis,
  type TestDatabase,
  type TestRedis,
  serviceTestEnv,
} from "@ratatoskr/testkit/vitest";
import type { Job, JobType } from "bullmq";
import { Telegram } from "telegraf";
import { vi } from "vitest";
import { ingressService } from "../../src/index.ts";

/** Generous: a slow CI machine, never a fixed sleep. */
export const WAIT = { timeout: 10_000, interval: 25 };

const JOB_STATES: JobType[] = ["waiting", "active", "delayed", "completed", "failed", "prioritized"];

/**
 * One ingress process (startHost, as main.ts does) against a fake Bot API, a schema of its own
 * and a Redis prefix of its own. No notifier runs: replies are asserted as notification rows
 * and notify jobs, which is exactly what ingress hands over.
 */
export class IngressHarness {
  private pushed = 0;

  private constructor(
    readonly fake: FakeTelegram,
    readonly host: RunningHost,
    private readonly database: TestDatabase,
    private readonly redis: TestRedis,
  ) {}

  static async start(env: NodeJS.ProcessEnv = {}): Promise<IngressHarness> {
    const fake = await new FakeTelegram().start();
    const database = await createTestDatabase();
    const redis = createTestRedis();
    const host = await startHost({
      name: "ingress",
      services: [ingressService],
      env: serviceTestEnv(database, redis, {
        BULL_BOARD_DISABLED: "true",
        TELEGRAM_BOT_TOKEN: fake.token,
        TELEGRAM_API_ROOT: fake.url,
        ...env,
      }),
      handleSignals: false,
    });
    return new IngressHarness(fake, host, database, redis);
  }

  get prisma(): PrismaClient {
    return this.database.db.prisma;
  }

  async stop(): Promise<void> {
    await this.host.shutdown("test done");
    await this.fake.stop();
    await this.redis.cleanup();
    await this.database.drop();
  }

  // ---- the person ----

  /** `rawFields`: message fields as JSON text, sent as given (input JSON.stringify cannot make). */
  say(
    chatId: number,
    text: string,
    fromUserId?: number,
    rawFields?: Record<string, string>,
    threadId?: number,
  ): void {
    this.fake.sendText(chatId, text, {
      ...(fromUserId === undefined ? {} : { from: { id: fromUserId } }),
      ...(rawFields ? { rawFields } : {}),
      ...(threadId === undefined ? {} : { threadId }),
    });
    this.pushed += 1;
  }

  press(chatId: number, messageId: number, data: string): string {
    const id = this.fake.pressButton(chatId, messageId, data);
    this.pushed += 1;
    return id;
  }

  /** The draft message with its three buttons, as the notifier sends it; returns its message id. */
  async showDraftButtons(chatId: number, taskId: number): Promise<number> {
    const button = (text: string, action: "approve" | "edit" | "cancel") => ({
      text,
      callback_data: formatCallbackData({ action, taskId }),
    });
    const telegram = new Telegram(this.fake.token, { apiRoot: this.fake.url });
    const sent = await telegram.sendMessage(chatId, `Draft #${taskId}`, {
      reply_markup: {
        inline_keyboard: [[button("Approve", "approve"), button("Edit", "edit"), button("Cancel", "cancel")]],
      },
    });
    return sent.message_id;
  }

  /**
   * Every update pushed so far is handled: the poller confirms a batch (getUpdates with a higher
   * offset) once it is stored, and the inbox then has nothing pending. Update ids of a fresh fake
   * count from 1.
   */
  async settled(): Promise<void> {
    const last = this.pushed;
    await vi.waitFor(() => {
      const confirmed = this.fake.requests("getUpdates").some((r) => Number(r.params.offset) > last);
      if (!confirmed) throw new Error(`update ${last} not stored yet`);
    }, WAIT);
    await this.inboxDrained();
  }

  /** No stored update waits to be handled any more. */
  async inboxDrained(): Promise<void> {
    await vi.waitFor(async () => {
      const pending = await this.host.context.repos.telegramUpdates.pendingCount();
      if (pending > 0) throw new Error(`${pending} telegram updates still pending`);
    }, WAIT);
  }

  // ---- what ingress stored ----

  tasks(chatId: number): Promise<Task[]> {
    return this.prisma.task.findMany({ where: { chatId: BigInt(chatId) }, orderBy: { id: "asc" } });
  }

  async onlyTask(chatId: number): Promise<Task> {
    const tasks = await this.tasks(chatId);
    if (tasks.length !== 1) throw new Error(`chat ${chatId} has ${tasks.length} tasks, expected 1`);
    return tasks[0] as Task;
  }

  notifications(chatId: number, template?: string): Promise<Notification[]> {
    return this.prisma.notification.findMany({
      where: { chatId: BigInt(chatId), ...(template ? { template } : {}) },
      orderBy: { id: "asc" },
    });
  }

  /** Waits for a notification of `template` in the chat and returns it (the first one). */
  async waitForNotification(chatId: number, template: string): Promise<Notification> {
    return vi.waitFor(async () => {
      const [found] = await this.notifications(chatId, template);
      if (!found) throw new Error(`no ${template} notification for chat ${chatId} yet`);
      return found;
    }, WAIT);
  }

  turnTexts(taskId: number): Promise<string[]> {
    return this.prisma.dialogueTurn
      .findMany({ where: { taskId }, orderBy: { id: "asc" } })
      .then((turns) => turns.map((t) => t.text));
  }

  /** Jobs of a queue in any state, optionally only those of one task. */
  async jobs<Q extends QueueName>(queue: Q, taskId?: number): Promise<Array<Job<JobData<Q>>>> {
    const all: Array<Job<JobData<Q>>> = await this.host.context.queues.queues[queue].getJobs(JOB_STATES);
    return all.filter((job) => taskId === undefined || (job.data as { taskId?: number }).taskId === taskId);
  }

  /** What another service would report (the analyst's verdict, the dev run…). */
  transition(taskId: number, event: TaskEvent) {
    return this.host.context.transition(taskId, event);
  }

  /** A task of this chat whose draft is ready for approval (the analyst drafted it). */
  async readyTask(chatId: number, request = "Add a health endpoint to acme/api"): Promise<Task> {
    this.say(chatId, request);
    await this.settled();
    const task = (await this.tasks(chatId)).at(-1) as Task;
    await this.transition(task.id, { type: "analyst.drafted", consumedTurns: 1, forced: false });
    return task;
  }
}
