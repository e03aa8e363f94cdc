import {
  FakeGitea,
  gitFixture,
  startServiceProcess,
  startTestOpencode,
  type OpencodeServer,
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
type Comment = ReturnType<FakeGitea["commentsOf"]>[number];
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { vi } from "vitest";

const AGENTS_DIR = fileURLToPath(new URL("../../agents/", import.meta.url));
export const DEV = "You are the developer agent of Ratatoskr";
export const REVIEWER = "You are the reviewer agent of Ratatoskr";
export const PLANNER = "You are the planner agent of Ratatoskr";
export const POSTMORTEM = "You are the postmortem analyst of Ratatoskr";
export const REPO = "acme/shop";
const SECRET = "e2e-webhook-secret";

export type GiteaService = "ingress" | "dev" | "reviewer" | "notifier" | "analyst" | "postmortem";

/**
 * The Gitea front door as a team meets it: every service its own process sharing only Redis and
 * Postgres, a real opencode serve on the scripted model with the project's agents, and a fake
 * Gitea whose repositories are real git over smart HTTP and whose webhooks are signed deliveries.
 */
export class GiteaE2eHarness {
  database!: TestDatabase;
  redis!: TestRedis;
  gitea!: FakeGitea;
  model!: ScriptedModel;
  opencode!: OpencodeServer;
  root!: string;
  env!: NodeJS.ProcessEnv;
  readonly running = new Map<string, ServiceProcess>();

  async start(services: readonly GiteaService[], extraEnv: NodeJS.ProcessEnv = {}): Promise<void> {
    this.root = await mkdtemp(join(tmpdir(), "ratatoskr-gitea-e2e-"));
    let agents;
    [this.database, this.gitea, agents] = await Promise.all([
      createTestDatabase(),
      new FakeGitea({ token: "e2e-token", gitRoot: join(this.root, "git") }).start(),
      startTestOpencode({ agentsDir: AGENTS_DIR, claims: [this.root] }),
    ]);
    ({ model: this.model, opencode: this.opencode } = agents);
    this.redis = createTestRedis();
    await this.gitea.createRepo(REPO, { "README.md": "# shop\n" });
    this.gitea.setPermission(REPO, "alice", "write");
    this.gitea.setPermission(REPO, "rita", "read");
    this.env = serviceProcessEnv(this.database, this.redis, {
      ...agentOpencodeEnv(this.opencode, this.model),
      WORKSPACE_DIR: join(this.root, "workspaces"),
      GITEA_URL: this.gitea.url,
      GITEA_TOKEN: this.gitea.token,
      GITEA_WEBHOOK_SECRET: SECRET,
      GITEA_BOT_LOGIN: this.gitea.botLogin,
      GITEA_SWEEP_INTERVAL_MS: "0",
      GITEA_STATUS_REFRESH_MS: "1000",
      ...extraEnv,
    });
    const started = await Promise.all(services.map((name) => this.startService(name)));
    for (const service of started) this.running.set(service.name, service);
    const ingress = this.running.get("ingress");
    if (ingress) this.gitea.addWebhook(`${ingress.url}/webhooks/gitea`, SECRET);
  }

  startService(name: GiteaService, env: NodeJS.ProcessEnv = {}): Promise<ServiceProcess> {
    return startServiceProcess(name, { env: { ...this.env, ...env }, timeoutMs: 90_000 });
  }

  async stop(): Promise<void> {
    await Promise.all([...this.running.values()].map((service) => service.stop("SIGKILL")));
    await Promise.allSettled([this.gitea?.stop(), this.opencode?.stop(), this.model?.close()]);
    await this.redis?.cleanup();
    await this.database?.drop();
    if (this.root) await rm(this.root, { recursive: true, force: true });
  }

  /** A person comments on an issue/PR; resolves with the stored command once ingress took it. */
  async command(number: number, body: string, author = "alice") {
    const { comment } = await this.gitea.comment(REPO, number, author, body);
    return vi.waitFor(
      async () => {
        const task = await this.database.db.prisma.task.findFirst({ where: { commentId: comment.id! } });
        if (!task) throw new Error(`no command for comment ${comment.id}`);
        return task;
      },
      { timeout: 15_000, interval: 50 },
    );
  }

  task(taskId: number) {
    return this.database.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } });
  }

  traces(taskId: number) {
    return this.database.db.prisma.agentTrace.findMany({ where: { taskId }, orderBy: [{ startedAt: "asc" }, { id: "asc" }] });
  }

  async waitForStatus(taskId: number, status: string, timeoutMs = 90_000) {
    return vi
      .waitFor(
        async () => {
          const task = await this.task(taskId);
          if (task.status !== status) throw new Error(`task ${taskId} is ${task.status}, not ${status}: ${task.failureReason ?? ""}`);
          return task;
        },
        { timeout: timeoutMs, interval: 100 },
      )
      .catch((err: unknown) => {
        throw new Error(`${String(err)}\n${this.logs()}`);
      });
  }

  /** The status comment of a command (found by its hidden marker) once it contains every text. */
  async waitForStatusComment(number: number, taskId: number, texts: string[], timeoutMs = 30_000): Promise<Comment> {
    return vi.waitFor(
      () => {
        const found = this.statusComments(number, taskId);
        const body = found.at(-1)?.body ?? "";
        const missing = texts.filter((t) => !body.includes(t));
        if (found.length === 0 || missing.length > 0) throw new Error(`status comment of #${taskId} lacks ${missing.join(", ")}: ${body}`);
        return found.at(-1)!;
      },
      { timeout: timeoutMs, interval: 100 },
    );
  }

  statusComments(number: number, taskId: number): Comment[] {
    return this.gitea.commentsOf(REPO, number).filter((c) => (c.body ?? "").includes(`ratatoskr:status task=${taskId} `));
  }

  /** Runs git in the fake Gitea's bare repository (what a clone would see). */
  git(args: readonly string[]): Promise<string> {
    return gitFixture(this.gitea.bareDir(REPO), args);
  }

  logs(): string {
    return [...this.running.values()].map((s) => `--- ${s.name}\n${s.output().slice(-3000)}`).join("\n");
  }
}
