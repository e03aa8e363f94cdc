import { mkdir, readFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TaskEvent } from "@ratatoskr/contracts";
import { DialogueTurnRepository, type Notification, type PrismaClient, type Task } from "@ratatoskr/db";
import { startHost, type RunningHost } from "@ratatoskr/service-host";
import {
  FakeGitea,
  startTestOpencode,
  type ModelRequest,
  type OpencodeServer,
  type ScriptedModel,
} from "@ratatoskr/testkit";
import {
  createTestDatabase,
  createTestRedis,
  type TestDatabase,
  type TestRedis,
  agentOpencodeEnv,
  serviceTestEnv,
} from "@ratatoskr/testkit/vitest";
import { vi } from "vitest";
import { analystService } from "../../src/index.ts";
import { PROMPT_SECTIONS } from "../../src/prompt/analyst-prompt.ts";

/** Generous for a slow machine; never a fixed sleep. */
export const WAIT = { timeout: 25_000, interval: 50 };

export const AGENTS_DIR = fileURLToPath(new URL("../../../../agents/", import.meta.url));
export const EXISTING_REPO = "acme/web";
export const MAX_QUESTIONS = 2;

/** The first line of the real agent file's body: what the model sees as its system prompt. */
export async function analystPromptMark(): Promise<string> {
  const file = await readFile(join(AGENTS_DIR, "analyst.md"), "utf8");
  const body = file.split(/^---$/m)[2] ?? "";
  const first = body.trim().split("\n")[0];
  if (!first) throw new Error("agents/analyst.md has no prompt body");
  return first;
}

/** Basic-auth headers for a test's own requests to the opencode server. */
export function opencodeAuth(opencode: OpencodeServer): { authorization: string } {
  return { authorization: `Basic ${Buffer.from(`opencode:${opencode.password}`).toString("base64")}` };
}

/**
 * Boots one directory on a fresh opencode server before the tests: the first location a server
 * boots costs the most (10-20 s on a loaded 2-core machine, against ~5 s for the next ones), and
 * that cost belongs to no test. The service boots its own analyst directory when it starts.
 */
export async function warmOpencode(opencode: OpencodeServer, directory: string): Promise<void> {
  await mkdir(directory, { recursive: true });
  const url = `${opencode.url}/api/provider/fake?location%5Bdirectory%5D=${encodeURIComponent(directory)}`;
  const headers = opencodeAuth(opencode);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(60_000) });
    await res.body?.cancel();
    if (res.ok) return;
    if (Date.now() > deadline)
      throw new Error(`opencode did not boot ${directory} within 60 s (last answer ${res.status})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** When opencode booted which directory: its `catalog.updated` events, recorded from server start. */
export interface BootLog {
  readonly boots: ReadonlyArray<{ directory: string; at: number }>;
  close(): void;
}

function recordBoots(opencode: OpencodeServer): BootLog {
  const boots: Array<{ directory: string; at: number }> = [];
  const abort = new AbortController();
  const headers = opencodeAuth(opencode);
  void (async () => {
    const res = await fetch(`${opencode.url}/api/event`, { headers, signal: abort.signal });
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of res.body ?? []) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      for (const line of lines) {
        if (!line.startsWith("data:") || !line.includes("catalog.updated")) continue;
        const event = JSON.parse(line.slice(5)) as { type?: string; location?: { directory?: string } };
        if (event.type === "catalog.updated" && event.location?.directory)
          boots.push({ directory: event.location.directory, at: Date.now() });
      }
    }
  })().catch(() => undefined);
  return { boots, close: () => abort.abort() };
}

let seq = 0;
/** A marker unique in this test process; rules route on it. */
export function marker(name: string): string {
  return `[[${name}-${process.pid}-${++seq}]]`;
}

/** The part of a prompt under one heading. */
export function section(prompt: string, heading: keyof typeof PROMPT_SECTIONS): string {
  const start = prompt.indexOf(PROMPT_SECTIONS[heading]);
  if (start < 0) return "";
  const rest = prompt.slice(start + PROMPT_SECTIONS[heading].length);
  const next = rest.search(/\n## /);
  return next < 0 ? rest : rest.slice(0, next);
}

/**
 * The analyst service as main.ts runs it (startHost), with a real `opencode serve` holding the
 * real agents/analyst.md, a scripted model, a fake Gitea, and a Postgres schema and Redis prefix
 * of its own. Tests drive tasks the way ingress does (turn row + `turn.received` in one transaction).
 */
export class AnalystHarness {
  private constructor(
    readonly model: ScriptedModel,
    readonly opencode: OpencodeServer,
    readonly gitea: FakeGitea,
    readonly database: TestDatabase,
    readonly redis: TestRedis,
    readonly host: RunningHost,
    readonly workspace: string,
    readonly promptMark: string,
    readonly bootLog: BootLog,
  ) {}

  /** The directory every analyst session works in. */
  get analystDir(): string {
    return join(this.workspace, "analyst", "shared");
  }

  static async start(): Promise<AnalystHarness> {
    const workspace = await mkdtemp(join(tmpdir(), "ratatoskr-analyst-test-"));
    const { model, opencode } = await startTestOpencode({ agentsDir: AGENTS_DIR, claims: [workspace] });
    const gitea = await new FakeGitea().start();
    gitea.addRepo(EXISTING_REPO);
    const database = await createTestDatabase();
    const redis = createTestRedis();
    const bootLog = recordBoots(opencode);
    await warmOpencode(opencode, join(workspace, "warm-up"));
    const host = await startHost({
      name: "analyst",
      services: [analystService],
      env: serviceTestEnv(database, redis, {
        ...agentOpencodeEnv(opencode, model),
        WORKSPACE_DIR: workspace,
        GITEA_URL: gitea.url,
        GITEA_TOKEN: gitea.token,
        ANALYST_MAX_QUESTIONS: String(MAX_QUESTIONS),
        ANALYST_IDLE_TIMEOUT_MS: "20000",
        ANALYST_HARD_TIMEOUT_MS: "40000",
      }),
      handleSignals: false,
    });
    return new AnalystHarness(
      model,
      opencode,
      gitea,
      database,
      redis,
      host,
      workspace,
      await analystPromptMark(),
      bootLog,
    );
  }

  get prisma(): PrismaClient {
    return this.database.db.prisma;
  }

  transition(taskId: number, event: TaskEvent) {
    return this.host.context.transition(taskId, event);
  }

  /** A new Telegram task whose first message is `text` (as ingress opens one). */
  async startTask(text: string, chatId = 7_000 + seq): Promise<Task> {
    const task = await this.host.context.repos.tasks.createTelegramTask({
      chatId,
      maxTurns: 10,
      maxRounds: 3,
    });
    await this.say(task.id, text);
    return task;
  }

  /** One dialogue turn: stored and counted in one transaction, as ingress does it. */
  async say(taskId: number, text: string): Promise<void> {
    await this.host.context.transition(
      taskId,
      { type: "turn.received" },
      {
        alongside: (tx) =>
          new DialogueTurnRepository(tx).add({ taskId, role: "user", text }).then(() => undefined),
      },
    );
  }

  /** Waits until no analysis is in flight for the task, then returns it. */
  async settled(taskId: number): Promise<Task> {
    return vi.waitFor(async () => {
      const task = await this.prisma.task.findUniqueOrThrow({ where: { id: taskId } });
      if (task.analysing) throw new Error(`task ${taskId} is still analysing`);
      return task;
    }, WAIT);
  }

  notifications(taskId: number): Promise<Notification[]> {
    return this.prisma.notification.findMany({ where: { taskId }, orderBy: { id: "asc" } });
  }

  /** The analyst prompts (first turn of each session) whose text contains `mark`, in order. */
  analystPrompts(mark: string): ModelRequest[] {
    return this.model.requests.filter(
      (r) => r.system.includes(this.promptMark) && r.userTexts.length === 1 && r.lastUserText.includes(mark),
    );
  }

  async waitForPrompt(
    mark: string,
    heading: keyof typeof PROMPT_SECTIONS = "newMessages",
  ): Promise<ModelRequest> {
    return vi.waitFor(() => {
      const found = this.model.requests.find(
        (r) => r.system.includes(this.promptMark) && section(r.lastUserText, heading).includes(mark),
      );
      if (!found) throw new Error(`no analyst prompt with ${mark} under ${heading} yet`);
      return found;
    }, WAIT);
  }

  async stop(): Promise<void> {
    await this.host?.shutdown("test finished");
    this.bootLog.close();
    await Promise.allSettled([this.opencode.stop(), this.gitea.stop()]);
    await this.model.close();
    await this.redis.cleanup();
    await this.database.drop();
    await rm(this.workspace, { recursive: true, force: true });
  }
}
