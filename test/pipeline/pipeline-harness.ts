import { Queue } from "bullmq";
import type { QueueName } from "@ratatoskr/contracts";
import {
  FakeTelegram,
  createBareRepo,
  gitFixture,
  startOpencodeServer,
  startScriptedModel,
  startServiceProcess,
  startTestOpencode,
  type OpencodeServer,
  type OpencodeServerOptions,
  type ProviderSpec,
  type ScriptedModel,
  type ServiceProcess,
} from "@ratatoskr/testkit";
import {
  agentOpencodeEnv,
  createTestDatabase,
  createTestRedis,
  serviceProcessEnv,
  type TestDatabase,
  type TestRedis,
} from "@ratatoskr/testkit/vitest";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const AGENTS_DIR = fileURLToPath(new URL("../../agents/", import.meta.url));
export const DEV = "You are the developer agent of Ratatoskr";
export const REVIEWER = "You are the reviewer agent of Ratatoskr";
export const POSTMORTEM = "You are the postmortem analyst of Ratatoskr";
export const CHATS = [201, 202, 203, 204, 205, 206, 207, 208, 209, 210];

export type PipelineService = "ingress" | "dev" | "reviewer" | "notifier" | "postmortem" | "analyst";

/**
 * The pipeline as a person meets it: services as separate processes sharing only Redis and
 * Postgres, a real opencode serve on the scripted model with the project's own agents, local
 * bare git repositories as the git host, and a fake Telegram.
 */
export class PipelineHarness {
  database!: TestDatabase;
  redis!: TestRedis;
  telegram!: FakeTelegram;
  model!: ScriptedModel;
  /** The first (or only) opencode server. */
  opencode!: OpencodeServer;
  /** Every opencode server; the services get them all in OPENCODE_URLS when there are several. */
  pool: OpencodeServer[] = [];
  root!: string;
  remotes!: string;
  env!: NodeJS.ProcessEnv;
  readonly running = new Map<string, ServiceProcess>();
  private readonly queues: Queue[] = [];

  /**
   * `infra`: the Postgres and Redis to use outside vitest (a bench); tests get theirs injected.
   * `opencodeOptions.servers`: how many opencode servers (one password), default 1. One server
   * with no other option is the vitest worker's shared one (startTestOpencode) unless `own`.
   */
  async start(
    services: readonly PipelineService[],
    extraEnv: NodeJS.ProcessEnv = {},
    infra?: { databaseUrl: string; redisUrl: string },
    opencodeOptions: Omit<Partial<OpencodeServerOptions>, "provider"> & { provider?: Omit<ProviderSpec, "baseUrl">; servers?: number; own?: boolean } = {},
  ): Promise<void> {
    this.root = await mkdtemp(join(tmpdir(), "ratatoskr-pipeline-"));
    const { servers = 1, own = false, ...serverOptions } = opencodeOptions;
    [this.database, this.telegram] = await Promise.all([createTestDatabase(infra?.databaseUrl), new FakeTelegram().start()]);
    this.redis = createTestRedis(infra?.redisUrl);
    if (servers === 1 && Object.keys(serverOptions).length === 0) {
      ({ model: this.model, opencode: this.opencode } = await startTestOpencode({ agentsDir: AGENTS_DIR, claims: [this.root], own }));
      this.pool = [this.opencode];
    } else {
      this.model = await startScriptedModel();
      const password = serverOptions.password ?? randomBytes(12).toString("hex");
      this.pool = await Promise.all(
        Array.from({ length: servers }, () =>
          startOpencodeServer({ agentsDir: AGENTS_DIR, ...serverOptions, password, provider: { ...serverOptions.provider, baseUrl: this.model.url } }),
        ),
      );
      this.opencode = this.pool[0]!;
    }
    this.remotes = join(this.root, "remotes");
    await mkdir(this.remotes, { recursive: true });
    this.env = serviceProcessEnv(this.database, this.redis, {
      TELEGRAM_BOT_TOKEN: this.telegram.token,
      TELEGRAM_API_ROOT: this.telegram.url,
      TELEGRAM_ALLOWED_CHAT_IDS: CHATS.join(","),
      BOT_LOCALE: "en",
      ...agentOpencodeEnv(this.opencode, this.model),
      ...(servers > 1 ? { OPENCODE_URLS: this.pool.map((s) => s.url).join(",") } : {}),
      WORKSPACE_DIR: join(this.root, "workspaces"),
      LOCAL_GIT_ROOT: this.remotes,
      ...extraEnv,
    });
    // Every process that did start is kept for stop(), even when another one failed to.
    const started = await Promise.allSettled(services.map((name) => this.startService(name)));
    for (const result of started) if (result.status === "fulfilled") this.running.set(result.value.name, result.value);
    const failed = started.find((result) => result.status === "rejected");
    if (failed) throw failed.reason;
  }

  startService(name: PipelineService, env: NodeJS.ProcessEnv = {}): Promise<ServiceProcess> {
    return startServiceProcess(name, { env: { ...this.env, ...env }, timeoutMs: 150_000 });
  }

  async stop(): Promise<void> {
    await Promise.all([...this.running.values()].map((service) => service.stop("SIGKILL")));
    await Promise.all(this.queues.map((queue) => queue.close()));
    await Promise.allSettled([this.telegram?.stop(), ...this.pool.map((s) => s.stop()), this.model?.close()]);
    await this.redis?.cleanup();
    await this.database?.drop();
    if (this.root) await rm(this.root, { recursive: true, force: true });
  }

  queue(name: QueueName): Queue {
    const queue = new Queue(name, { connection: { url: this.redis.url }, prefix: this.redis.prefix });
    this.queues.push(queue);
    return queue;
  }

  /** A bare repository `<owner>/<name>.git` on the local git host. */
  repo(fullName: string, files: Record<string, string> = { "README.md": "# shop\n" }): Promise<string> {
    return createBareRepo(this.remotes, fullName, files);
  }

  bare(fullName: string): string {
    return join(this.remotes, `${fullName}.git`);
  }

  /** Runs git in a bare remote (what anyone cloning it would see). */
  git(fullName: string, args: readonly string[]): Promise<string> {
    return gitFixture(this.bare(fullName), args);
  }

  /**
   * A task whose draft the analyst completed (status `ready`, the chat's active task), then the
   * person's "go" in the chat: everything after the approval is the real pipeline. `spentUsd`:
   * what the analysis already cost, recorded as its finished run.
   */
  async approvedTask(
    chatId: number,
    draft: { title: string; repos: string[]; goal?: string; maxRounds?: number; budgetUsd?: number; spentUsd?: number },
  ) {
    const task = await this.database.db.prisma.task.create({
      data: {
        source: "telegram",
        chatId,
        userId: chatId,
        locale: "en",
        maxTurns: 5,
        maxRounds: draft.maxRounds ?? 3,
        budgetUsd: draft.budgetUsd ?? null,
        status: "ready",
        title: draft.title,
        goal: draft.goal ?? `${draft.title}.`,
        repos: draft.repos,
        why: "Tests need it.",
        acceptanceCriteria: ["the change is pushed"],
        activeInChat: { connectOrCreate: { where: { chatId }, create: { chatId } } },
      },
    });
    if (draft.spentUsd !== undefined) {
      const at = new Date();
      await this.database.db.prisma.agentTrace.create({
        data: { taskId: task.id, agent: "analyst", prompt: draft.title, output: "{}", outcome: "completed", cost: draft.spentUsd, startedAt: at, endedAt: at },
      });
    }
    this.telegram.sendText(chatId, "go");
    return task.id;
  }

  /** Plain texts of the bot's messages to a chat, oldest first. */
  texts(chatId: number): string[] {
    return this.telegram
      .sent(chatId)
      .filter((r) => r.kind === "sent")
      .map((r) => r.plainText);
  }

  /** Waits until a bot message to the chat contains `text`; returns every message so far. */
  async waitForText(chatId: number, text: string, timeoutMs = 60_000): Promise<string[]> {
    await this.telegram.waitForMessages(chatId, (record) => record.plainText.includes(text), {
      timeoutMs,
      kind: "sent",
    });
    return this.texts(chatId);
  }

  task(taskId: number) {
    return this.database.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } });
  }

  traces(taskId: number) {
    return this.database.db.prisma.agentTrace.findMany({
      where: { taskId },
      orderBy: [{ startedAt: "asc" }, { id: "asc" }],
    });
  }

  /** What the service processes logged so far, for failure messages. */
  logs(): string {
    return [...this.running].map(([key, s]) => `--- ${key}\n${s.output().slice(-4000)}`).join("\n");
  }
}

/** Polls `probe` until it returns a value (no fixed sleeps), or fails after `timeoutMs` with the services' logs. */
export async function waitFor<T>(h: PipelineHarness, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms\n${h.logs()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
