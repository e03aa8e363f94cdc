import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TaskEvent } from "@ratatoskr/contracts";
import type { AgentTrace, Notification, PrismaClient, Task } from "@ratatoskr/db";
import { startHost, type RunningHost } from "@ratatoskr/service-host";
import { startTestOpencode, type ModelRequest, type OpencodeServer, type ScriptedModel } from "@ratatoskr/testkit";
import {
  agentOpencodeEnv,
  createTestDatabase,
  createTestRedis,
  serviceTestEnv,
  type TestDatabase,
  type TestRedis,
} from "@ratatoskr/testkit/vitest";
import { vi } from "vitest";
import { postmortemService } from "../../src/index.ts";

/** Generous for a slow machine; never a fixed sleep. */
export const WAIT = { timeout: 30_000, interval: 50 };
export const AGENTS_DIR = fileURLToPath(new URL("../../../../agents/", import.meta.url));
/** A phrase of agents/postmortem.md: requests carrying it are postmortem runs. */
export const POSTMORTEM_SYSTEM_MARK = "You are the postmortem analyst of Ratatoskr";

let seq = 0;
/** A marker unique in this test process; rules route on it. */
export function marker(name: string): string {
  return `[[${name}-${process.pid}-${++seq}]]`;
}

/**
 * The postmortem service as main.ts runs it (startHost), with a real `opencode serve` holding
 * the real agents/postmortem.md, a scripted model, and a Postgres schema and Redis prefix of its
 * own. Tests bring tasks to `failed`/`timeout` through real transitions, whose outbox enqueues
 * the postmortem job exactly as the dev and reviewer services do.
 */
export class PostmortemHarness {
  private constructor(
    readonly model: ScriptedModel,
    readonly opencode: OpencodeServer,
    readonly database: TestDatabase,
    readonly redis: TestRedis,
    readonly host: RunningHost,
    readonly workspace: string,
  ) {}

  static async start(env: NodeJS.ProcessEnv = {}): Promise<PostmortemHarness> {
    const workspace = await mkdtemp(join(tmpdir(), "ratatoskr-postmortem-test-"));
    const { model, opencode } = await startTestOpencode({ agentsDir: AGENTS_DIR, claims: [workspace] });
    const database = await createTestDatabase();
    const redis = createTestRedis();
    const host = await startHost({
      name: "postmortem",
      services: [postmortemService],
      env: serviceTestEnv(database, redis, {
        ...agentOpencodeEnv(opencode, model),
        WORKSPACE_DIR: workspace,
        POSTMORTEM_IDLE_TIMEOUT_MS: "20000",
        POSTMORTEM_HARD_TIMEOUT_MS: "40000",
        ...env,
      }),
      handleSignals: false,
    });
    return new PostmortemHarness(model, opencode, database, redis, host, workspace);
  }

  get prisma(): PrismaClient {
    return this.database.db.prisma;
  }

  transition(taskId: number, event: TaskEvent) {
    return this.host.context.transition(taskId, event);
  }

  /** A task the dev agent is working on (status `running`, round 1). */
  async runningTask(title: string, locale = "en"): Promise<Task> {
    const chatId = 8_000 + ++seq;
    const task = await this.prisma.task.create({
      data: {
        source: "telegram",
        chatId,
        userId: chatId,
        locale,
        maxTurns: 5,
        maxRounds: 2,
        status: "ready",
        title,
        goal: `${title}.`,
        repos: ["demo/hello"],
        why: "Tests need it.",
        acceptanceCriteria: ["the greeting says hello, world"],
        branch: "ratatoskr/1-greeting",
      },
    });
    await this.transition(task.id, { type: "user.approved" });
    await this.transition(task.id, { type: "dev.started" });
    return this.prisma.task.findUniqueOrThrow({ where: { id: task.id } });
  }

  /** A finished agent run of the task, as the dev or reviewer service stores it. */
  async addTrace(taskId: number, trace: { agent: string; round?: number; prompt: string; output: string; outcome?: string; error?: string }): Promise<void> {
    const startedAt = new Date(Date.now() - 60_000);
    await this.host.context.repos.traces.record(
      taskId,
      { ...trace, outcome: trace.outcome ?? "completed", startedAt, endedAt: new Date(startedAt.getTime() + 42_000), cost: 0.0123, tokens: { input: 1000, output: 200 } },
      trace.round ?? null,
    );
  }

  notifications(taskId: number): Promise<Notification[]> {
    return this.prisma.notification.findMany({ where: { taskId }, orderBy: { id: "asc" } });
  }

  postmortemTraces(taskId: number): Promise<AgentTrace[]> {
    return this.prisma.agentTrace.findMany({ where: { taskId, agent: "postmortem" }, orderBy: { id: "asc" } });
  }

  /** Waits until the task has a message with `template`; returns all its messages. */
  async waitForNotice(taskId: number, template: string): Promise<Notification[]> {
    return vi.waitFor(async () => {
      const all = await this.notifications(taskId);
      if (!all.some((n) => n.template === template)) throw new Error(`no ${template} for task ${taskId} yet`);
      return all;
    }, WAIT);
  }

  /** Postmortem prompts (first message of each postmortem session) that mention `mark`. */
  postmortemPrompts(mark: string): ModelRequest[] {
    return this.model.requests.filter((r) => r.system.includes(POSTMORTEM_SYSTEM_MARK) && r.userTexts.length === 1 && r.lastUserText.includes(mark));
  }

  async stop(): Promise<void> {
    await this.host?.shutdown("test finished");
    await this.opencode?.stop();
    await this.model?.close();
    await this.redis?.cleanup();
    await this.database?.drop();
    await rm(this.workspace, { recursive: true, force: true });
  }
}
