import type { TaskEvent } from "@ratatoskr/contracts";
import type { PrismaClient, Task } from "@ratatoskr/db";
import { notifierService } from "@ratatoskr/notifier";
import { startHost, type RunningHost } from "@ratatoskr/service-host";
import type { Comment } from "@ratatoskr/gitea";
import { FakeGitea } from "@ratatoskr/testkit";
import {
  createTestDatabase,
  createTestRedis,
  serviceTestEnv,
  type TestDatabase,
  type TestRedis,
} from "@ratatoskr/testkit/vitest";
import { vi } from "vitest";
import { ingressService } from "../../src/index.ts";

/** Generous for a slow shared machine; never a fixed sleep. */
export const WAIT = { timeout: 25_000, interval: 50 };
export const REPO = "acme/web";
export const SECRET = "gitea-webhook-secret";

/**
 * Ingress and the notifier as main.ts runs them (startHost), against a fake Gitea that posts
 * signed webhooks to the real route, with this file's own Postgres schema and Redis prefix.
 * No agent service runs: a started command stays `running` until the test settles it, which
 * lets tests see the queue of an issue/PR (G4, G7).
 */
export class GiteaHarness {
  private constructor(
    readonly gitea: FakeGitea,
    readonly database: TestDatabase,
    readonly redis: TestRedis,
    readonly host: RunningHost,
  ) {}

  static async start(env: NodeJS.ProcessEnv = {}): Promise<GiteaHarness> {
    const gitea = await new FakeGitea().start();
    gitea.addRepo(REPO);
    gitea.setPermission(REPO, "alice", "write");
    gitea.setPermission(REPO, "bob", "admin");
    gitea.setPermission(REPO, "rita", "read");
    const database = await createTestDatabase();
    const redis = createTestRedis();
    const host = await startHost({
      name: "ingress",
      services: [ingressService, notifierService],
      env: serviceTestEnv(database, redis, {
        GITEA_URL: gitea.url,
        GITEA_TOKEN: gitea.token,
        GITEA_WEBHOOK_SECRET: SECRET,
        GITEA_MAX_RUNNING: "2",
        GITEA_SWEEP_INTERVAL_MS: "0",
        GITEA_STATUS_REFRESH_MS: "0",
        BULL_BOARD_DISABLED: "true",
        LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
        ...env,
      }),
      handleSignals: false,
    });
    gitea.addWebhook(`${host.url}/webhooks/gitea`, SECRET);
    return new GiteaHarness(gitea, database, redis, host);
  }

  get prisma(): PrismaClient {
    return this.database.db.prisma;
  }

  transition(taskId: number, event: TaskEvent) {
    return this.host.context.transition(taskId, event);
  }

  async taskOfComment(commentId: number): Promise<Task> {
    return vi.waitFor(async () => {
      const task = await this.prisma.task.findFirst({ where: { commentId: BigInt(commentId) } });
      if (!task) throw new Error(`no task for comment ${commentId}`);
      return task;
    }, WAIT);
  }

  /**
   * A `/agent plan` by alice on issue `number`, stored as the drain stores it (`received`) but
   * with no route job: what routes it is up to the test.
   */
  storedCommand(number: number, commentId: number): Promise<Task> {
    const [repoOwner, repoName] = REPO.split("/");
    return this.prisma.task.create({
      data: {
        source: "gitea",
        status: "received",
        repoOwner,
        repoName,
        targetType: "issue",
        targetNumber: number,
        targetKey: `${REPO}#${number}`,
        commandKind: "plan",
        requesterLogin: "alice",
        commentId: BigInt(commentId),
        maxTurns: 0,
        maxRounds: 3,
      },
    });
  }

  /** Comments `body` as `author`; returns the command's task once stored. */
  async command(number: number, body: string, author = "alice"): Promise<Task> {
    const { comment, deliveries } = await this.gitea.comment(REPO, number, author, body);
    if (deliveries[0]?.status !== 202)
      throw new Error(`delivery answered ${deliveries[0]?.status}: ${deliveries[0]?.response}`);
    return this.taskOfComment(comment.id ?? 0);
  }

  async waitForStatus(taskId: number, status: string | string[]): Promise<Task> {
    const wanted = Array.isArray(status) ? status : [status];
    return vi.waitFor(async () => {
      const task = await this.prisma.task.findUniqueOrThrow({ where: { id: taskId } });
      if (!wanted.includes(task.status))
        throw new Error(`task ${taskId} is ${task.status}, waiting for ${wanted.join("|")}`);
      return task;
    }, WAIT);
  }

  /** The bot's comments on an issue/PR that carry task `taskId`'s marker. */
  statusComments(number: number, taskId: number): Comment[] {
    return this.gitea
      .commentsOf(REPO, number)
      .filter(
        (c) =>
          c.user?.login === this.gitea.botLogin &&
          (c.body ?? "").includes(`ratatoskr:status task=${taskId} `),
      );
  }

  /** Waits until the command's one status comment contains every text in `texts`. */
  async waitForStatusComment(number: number, taskId: number, ...texts: string[]): Promise<Comment> {
    return vi.waitFor(() => {
      const found = this.statusComments(number, taskId);
      if (found.length !== 1) throw new Error(`task ${taskId} has ${found.length} status comments`);
      const body = found[0]?.body ?? "";
      const missing = texts.filter((t) => !body.includes(t));
      if (missing.length > 0)
        throw new Error(`status comment of ${taskId} lacks ${JSON.stringify(missing)}:\n${body}`);
      return found[0]!;
    }, WAIT);
  }

  async stop(): Promise<void> {
    await this.host?.shutdown("test finished");
    await this.gitea.stop();
    await this.redis.cleanup();
    await this.database.drop();
  }
}
