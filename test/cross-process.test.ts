import { Queue } from "bullmq";
import { QUEUE } from "@ratatoskr/contracts";
import {
  FakeGitea,
  FakeTelegram,
  reply,
  startTestOpencode,
  startServiceProcess,
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
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ANALYST, scriptBackupDialogue } from "./support/backup-dialogue.ts";

/**
 * The six services as six processes sharing only Redis and Postgres, with a real opencode serve
 * answering from the scripted model, a fake Telegram and a fake Gitea: what a person on Telegram
 * lives, end to end.
 */
const SERVICES = ["ingress", "analyst", "dev", "reviewer", "postmortem", "notifier"] as const;
const AGENTS_DIR = fileURLToPath(new URL("../agents/", import.meta.url));
const ALLOWED = [101, 102, 103, 104, 105];
const STRANGER = 999;
const REPLY_MS = 30_000;
const BOARD_PASSWORD = "cross-process-board";

let database: TestDatabase;
let redis: TestRedis;
let telegram: FakeTelegram;
let gitea: FakeGitea;
let model: ScriptedModel;
let opencode: OpencodeServer;
let workspace: string;
let devQueue: Queue;
const running = new Map<string, ServiceProcess>();

beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), "ratatoskr-e2e-"));
  let agents;
  [database, telegram, gitea, agents] = await Promise.all([
    createTestDatabase(),
    new FakeTelegram().start(),
    new FakeGitea().start(),
    startTestOpencode({ agentsDir: AGENTS_DIR, claims: [workspace] }),
  ]);
  ({ model, opencode } = agents);
  redis = createTestRedis();
  gitea.addRepo("acme/shop");
  devQueue = new Queue(QUEUE.dev, { connection: { url: redis.url }, prefix: redis.prefix });
  const env = serviceProcessEnv(database, redis, {
    TELEGRAM_BOT_TOKEN: telegram.token,
    TELEGRAM_API_ROOT: telegram.url,
    TELEGRAM_ALLOWED_CHAT_IDS: ALLOWED.join(","),
    BOT_LOCALE: "en",
    ...agentOpencodeEnv(opencode, model),
    WORKSPACE_DIR: workspace,
    GITEA_URL: gitea.url,
    GITEA_TOKEN: gitea.token,
    BULL_BOARD_DISABLED: "false",
    BULL_BOARD_PASSWORD: BOARD_PASSWORD,
  });
  const started = await Promise.all(SERVICES.map((name) => startServiceProcess(name, { env, timeoutMs: 90_000 })));
  for (const service of started) running.set(service.name, service);
}, 180_000);

afterAll(async () => {
  await Promise.all([...running.values()].map((service) => service.stop("SIGKILL")));
  await devQueue?.close();
  await Promise.allSettled([telegram?.stop(), gitea?.stop(), opencode?.stop(), model?.close()]);
  await redis?.cleanup();
  await database?.drop();
  if (workspace) await rm(workspace, { recursive: true, force: true });
});

/** Texts the bot sent to a chat so far, oldest first. */
const texts = (chatId: number) => telegram.sent(chatId).filter((r) => r.kind === "sent").map((r) => r.plainText);

/** Waits until the chat holds `count` bot messages and returns the newest. */
async function botMessages(chatId: number, count: number) {
  const records = await telegram.waitForMessages(chatId, (_r, all) => all.length >= count, {
    timeoutMs: REPLY_MS,
    kind: "sent",
  });
  return records;
}

const taskOf = (chatId: number) =>
  database.db.prisma.task.findFirstOrThrow({ where: { chatId: BigInt(chatId) }, orderBy: { id: "desc" } });

describe("services as separate processes", () => {
  it("each reports ready on its own health server, opencode included where agents run", async () => {
    // A probe is a moment: each check is bounded (2 s), so on a loaded host one probe may miss
    // while the suite runs beside it; ready means a probe answers 200 within the deadline.
    const probe = async (url: string) => {
      const res = await fetch(`${url}/health/ready`);
      return { status: res.status, checks: ((await res.json()) as { checks: Record<string, string> }).checks };
    };
    for (const service of running.values()) {
      await vi.waitFor(async () => {
        const { status } = await probe(service.url);
        expect({ service: service.name, status }).toEqual({ service: service.name, status: 200 });
      }, { timeout: REPLY_MS, interval: 500 });
    }
    await vi.waitFor(async () => {
      const analyst = await probe(running.get("analyst")!.url);
      expect(analyst).toMatchObject({ status: 200, checks: { opencode: "ok" } });
    }, { timeout: REPLY_MS, interval: 500 });
  });

  it("serves Bull Board from the ingress process: the page, its UI's files and the queues, to the password only", async () => {
    // The built service runs from its bundle: the board finds its UI package's files on disk, and
    // its login guard loads rate-limiter-flexible (CommonJS) through a dynamic import.
    const board = `${running.get("ingress")!.url}/admin/queues`;
    const basic = (password: string) => ({ authorization: `Basic ${Buffer.from(`admin:${password}`).toString("base64")}` });
    expect((await fetch(`${board}/api/queues`, { headers: basic("a-guess") })).status).toBe(401);
    const queues = await fetch(`${board}/api/queues`, { headers: basic(BOARD_PASSWORD) });
    expect(queues.status).toBe(200);
    expect(((await queues.json()) as { queues: Array<{ name: string }> }).queues.map((q) => q.name)).toContain(QUEUE.intake);
    const page = await fetch(`${board}/`, { headers: basic(BOARD_PASSWORD) });
    expect(page.status).toBe(200);
    const script = /src="(static\/[^"]+\.js)"/.exec(await page.text())?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${board}/${script}`, { headers: basic(BOARD_PASSWORD) });
    expect({ status: asset.status, type: asset.headers.get("content-type") }).toMatchObject({
      status: 200,
      type: expect.stringMatching(/javascript/),
    });
    expect((await asset.text()).length).toBeGreaterThan(1000);
  });

  it("takes a request from /start through questions and a draft to approval and a dev job", async () => {
    const chat = ALLOWED[0]!;
    scriptBackupDialogue(model);

    telegram.sendText(chat, "/start");
    const [greeting] = await botMessages(chat, 1);
    const taskId = Number(/#(\d+)/.exec(greeting!.plainText)?.[1]);
    expect(taskId).toBeGreaterThan(0);

    telegram.sendText(chat, "Please add a backup job to our shop");
    const asked = (await botMessages(chat, 2))[1]!;
    expect(asked.plainText).toContain("Which database?");
    expect(asked.plainText).toContain("How often?");

    telegram.sendText(chat, "postgres, nightly");
    const draft = (await botMessages(chat, 3))[2]!;
    expect(draft.plainText).toContain("Nightly database backup");
    expect(draft.plainText).toContain("acme/shop");
    const buttons = draft.replyMarkup?.inline_keyboard.flat().map((b) => b.callback_data) ?? [];
    expect(buttons).toEqual([`approve:${taskId}`, `edit:${taskId}`, `cancel:${taskId}`]);

    telegram.sendText(chat, "создавай");
    const approved = (await botMessages(chat, 4))[3]!;
    expect(approved.plainText).toContain(`#${taskId}`);
    // Approved exactly once; the dev service then takes it on (and here fails: acme/shop has no rule).
    const approvals = await database.db.prisma.taskEvent.findMany({ where: { taskId, type: "user.approved" } });
    expect(approvals.map((e) => [e.fromStatus, e.toStatus])).toEqual([["ready", "approved"]]);
    const devJobs = await devQueue.getJobs(["waiting", "active", "completed", "failed", "delayed"]);
    expect(devJobs.filter((j) => j.data.taskId === taskId).map((j) => j.data.kind)).toEqual(["implement"]);

    // What the analyst was told on its second turn: the whole dialogue, in order.
    const second = model.requests.filter((r) => r.lastUserText?.includes("postgres, nightly")).at(-1);
    const prompt = second?.lastUserText ?? "";
    expect(prompt.indexOf("backup job")).toBeGreaterThanOrEqual(0);
    expect(prompt.indexOf("backup job")).toBeLessThan(prompt.indexOf("postgres, nightly"));
  });

  it("keeps three messages sent within a second, in order, and does not answer each", async () => {
    const chat = ALLOWED[1]!;
    const ask = reply.json({ phase: "ask", questions: ["Which repository?"] });
    model.addRule({ match: { systemIncludes: ANALYST, promptIncludes: "first: a login page" }, reply: [ask, ask, ask] });
    telegram.sendText(chat, "/start");
    await botMessages(chat, 1);
    for (const text of ["first: a login page", "second: with OAuth", "third: tests"]) telegram.sendText(chat, text);
    await botMessages(chat, 2);
    const task = await taskOf(chat);
    await vi.waitFor(
      async () => {
        const turns = await database.db.prisma.dialogueTurn.findMany({
          where: { taskId: task.id, role: "user" },
          orderBy: { id: "asc" },
        });
        expect(turns.map((t) => t.text)).toEqual(["first: a login page", "second: with OAuth", "third: tests"]);
        expect(turns.every((t) => t.analysedAt !== null)).toBe(true);
      },
      { timeout: REPLY_MS },
    );
    // The analysis that answered saw all three, in the order they were sent.
    const prompts = model.requests.filter((r) => r.lastUserText?.includes("first: a login page"));
    const last = prompts.at(-1)?.lastUserText ?? "";
    const at = ["first: a login page", "second: with OAuth", "third: tests"].map((t) => last.indexOf(t));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(texts(chat).filter((t) => t.includes("Which repository?")).length).toBeLessThan(3);
  }, 60_000);

  it("refuses a chat that is not on the allowlist once and stores nothing", async () => {
    telegram.sendText(STRANGER, "/start");
    telegram.sendText(STRANGER, "hello?");
    await botMessages(STRANGER, 1);
    telegram.sendText(ALLOWED[2]!, "/help");
    await botMessages(ALLOWED[2]!, 1); // a later update is handled, so the stranger's are done
    expect(texts(STRANGER)).toHaveLength(1);
    expect(await database.db.prisma.task.count({ where: { chatId: BigInt(STRANGER) } })).toBe(0);
  });

  it("answers an unknown command with the list, and delivers after a 429 in order", async () => {
    const chat = ALLOWED[3]!;
    telegram.failNext("sendMessage", { error_code: 429, retry_after: 1 });
    telegram.sendText(chat, "/frobnicate");
    telegram.sendText(chat, "/status 999999");
    const [unknown, status] = await botMessages(chat, 2);
    expect(unknown!.plainText).toContain("/frobnicate");
    expect(unknown!.plainText).toContain("/status");
    expect(status!.plainText).toContain("999999");
    expect(status!.time - unknown!.time).toBeGreaterThanOrEqual(900);
    expect(telegram.requests("sendMessage").length).toBeGreaterThan(texts(chat).length);
  });

  it("drafts at once on /skip, cancels on /cancel, and refuses /retry of a finished task", async () => {
    const chat = ALLOWED[4]!;
    model.addRule({
      match: { systemIncludes: ANALYST, promptIncludes: "skip questions" },
      reply: [
        reply.json({
          phase: "propose",
          draft: {
            title: "Speed up the cart",
            goal: "The cart page loads in under a second.",
            repos: ["acme/shop"],
            why: "Customers leave.",
            acceptanceCriteria: ["cart loads < 1 s"],
          },
        }),
      ],
    });
    telegram.sendText(chat, "/start");
    await botMessages(chat, 1);
    telegram.sendText(chat, "/skip");
    const draft = (await botMessages(chat, 2))[1]!;
    expect(draft.plainText).toContain("Speed up the cart");
    const skipped = await taskOf(chat);
    expect(skipped.status).toBe("ready");

    telegram.sendText(chat, "/cancel");
    const cancelled = (await botMessages(chat, 3))[2]!;
    expect(cancelled.plainText).toContain(`#${skipped.id}`);
    expect((await taskOf(chat)).status).toBe("cancelled");

    // A task that already succeeded (set directly: the dev pipeline is a later issue).
    await database.db.prisma.task.update({ where: { id: skipped.id }, data: { status: "success" } });
    telegram.sendText(chat, `/retry ${skipped.id}`);
    const refused = (await botMessages(chat, 4))[3]!;
    expect(refused.plainText).toContain(`Task #${skipped.id} can't be restarted`);
    expect((await taskOf(chat)).status).toBe("success");
    const devJobs = await devQueue.getJobs(["waiting", "active", "completed", "failed", "delayed"]);
    expect(devJobs.filter((j) => j.data.taskId === skipped.id)).toEqual([]);
  }, 60_000);

  it("exits 0 on SIGTERM", async () => {
    const notifier = running.get("notifier")!;
    const code = await notifier.stop("SIGTERM");
    running.delete("notifier");
    expect(code).toBe(0);
    expect(notifier.output()).toContain("shutdown finished");
  });
});
