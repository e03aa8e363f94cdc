import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createFollowUpDispatcher,
  createRepositories,
  DialogueTurnRepository,
  type Repositories,
} from "@ratatoskr/db";
import { createLogger, createQueues, createRedisConnection, type QueueSet, type Redis } from "@ratatoskr/runtime";
import {
  reply,
  startTestOpencode,
  startServiceProcess,
  type ModelRequest,
  type OpencodeServer,
  type ScriptedModel,
  type ServiceProcess,
} from "@ratatoskr/testkit";
import {
  createTestDatabase,
  createTestRedis,
  agentOpencodeEnv,
  serviceTestEnv,
  QUICK_JOB_LOCKS,
  type TestDatabase,
  type TestRedis,
} from "@ratatoskr/testkit/vitest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { holdTaskRecords } from "../../../test/support/record-hold.ts";
import { AGENTS_DIR, analystPromptMark, marker, section, warmOpencode } from "./support/analyst-harness.ts";

const logger = createLogger({ service: "analyst-killed-test", level: "silent" });
let model: ScriptedModel;
let opencode: OpencodeServer;
let database: TestDatabase;
let redis: TestRedis;
let repos: Repositories;
let producer: Redis;
let queues: QueueSet;
let workspace: string;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), "ratatoskr-analyst-killed-"));
  ({ model, opencode } = await startTestOpencode({ agentsDir: AGENTS_DIR, claims: [workspace] }));
  database = await createTestDatabase();
  redis = createTestRedis();
  repos = createRepositories(database.db.prisma);
  producer = createRedisConnection(redis.url, "producer", { logger });
  queues = createQueues({ connection: producer, prefix: redis.prefix, logger });
  await warmOpencode(opencode, join(workspace, "warm-up"));
}, 90_000);
afterAll(async () => {
  for (const p of processes) await p.stop("SIGKILL");
  await queues?.close();
  producer?.disconnect();
  await opencode?.stop();
  await model?.close();
  await redis?.cleanup();
  await database?.drop();
  await rm(workspace, { recursive: true, force: true });
});

function analystProcess(): Promise<ServiceProcess> {
  const env = serviceTestEnv(database, redis, {
    ...agentOpencodeEnv(opencode, model),
    WORKSPACE_DIR: workspace,
    LOG_LEVEL: "info",
    ...QUICK_JOB_LOCKS,
  });
  return startServiceProcess("analyst", { env, timeoutMs: 60_000 }).then((p) => (processes.push(p), p));
}

/** A task whose first message was just stored and its analysis queued. */
async function messaged(chatId: number, text: string) {
  const dispatcher = createFollowUpDispatcher({ prisma: database.db.prisma, enqueue: async (r) => void (await queues.enqueue(r)) });
  const task = await repos.tasks.createTelegramTask({ chatId, maxTurns: 5, maxRounds: 3 });
  const applied = await repos.applyTransition(task.id, { type: "turn.received" }, {
    alongside: (tx) => new DialogueTurnRepository(tx).add({ taskId: task.id, role: "user", text }).then(() => undefined),
  });
  await dispatcher.dispatch(applied.followUps);
  return task;
}

describe("analyst killed mid-run (separate processes, real opencode)", () => {
  it("is picked up within 30 s by another running process that continues the same session", async () => {
    const mark = marker("killed");
    const promptMark = await analystPromptMark();
    model.addRule({
      name: mark,
      match: (req) => req.system.includes(promptMark) && section(req.userTexts[0] ?? "", "newMessages").includes(mark),
      // The first run hangs (its process is killed meanwhile); the resumed one answers.
      reply: [reply.json({ phase: "ask", questions: ["never seen"] }, { delayMs: 120_000 }), reply.json({ phase: "ask", questions: ["Which repository?"] })],
    });
    const first = await analystProcess();
    const task = await messaged(7_100, `Add a health check ${mark}`);

    const live = await vi.waitFor(async () => {
      const [trace] = await repos.traces.listUnfinished(task.id, "analyst");
      if (!trace?.sessionId) throw new Error("the run has no session yet");
      return trace;
    }, { timeout: 30_000, interval: 100 });
    // The replica that takes over is already running, as in production: what is measured is the
    // takeover (lock expiry ≤ 15 s, the next stalled check ≤ 10 s, the resumed run), not how long
    // Node needs to start a process on a loaded machine.
    const second = await analystProcess();
    await first.stop("SIGKILL");
    const killedAt = Date.now();

    const settled = await vi.waitFor(async () => {
      const t = await database.db.prisma.task.findUniqueOrThrow({ where: { id: task.id } });
      if (t.analysing) throw new Error(`still analysing\n--- model ---\n${JSON.stringify(model.requests.map((r) => [r.sessionId, r.userTexts.length, r.isToolResult, r.lastUserText.slice(0, 80)]))}\n--- second analyst ---\n${second.output()}`);
      return t;
    }, { timeout: 60_000, interval: 100 });
    const recoveryMs = Date.now() - killedAt;
    process.stdout.write(`analyst killed mid-run: recovered in ${recoveryMs} ms\n`);
    expect(recoveryMs).toBeLessThanOrEqual(30_000 + 10_000 /* the resumed run on a loaded machine */);
    expect(settled).toMatchObject({ status: "collecting", pendingTurns: 0 });

    const traces = await repos.traces.list(task.id);
    expect(traces.map((t) => [t.outcome, t.sessionId])).toEqual([
      ["interrupted", live.sessionId],
      ["completed", live.sessionId],
    ]);
    const told = await database.db.prisma.notification.findMany({ where: { taskId: task.id } });
    expect(told.map((n) => n.template)).toEqual(["task.questions"]);
  }, 150_000);

  it("killed after its run finished, before it reported: the retry reports that run, the model is not asked again", async () => {
    const mark = marker("finished");
    const promptMark = await analystPromptMark();
    const asked = (req: ModelRequest) => req.system.includes(promptMark) && section(req.userTexts[0] ?? "", "newMessages").includes(mark);
    model.addRule({ name: mark, match: asked, reply: [reply.json({ phase: "ask", questions: ["Which repository?"] })] });
    for (const p of processes) await p.stop("SIGKILL");
    const first = await analystProcess();
    const task = await messaged(7_101, `Add a metrics endpoint ${mark}`);
    // The analysis reports through the task's row: held, its run finishes and its report waits.
    const hold = await holdTaskRecords(database, task.id);
    await vi.waitFor(async () => expect((await repos.traces.list(task.id)).map((t) => t.outcome)).toEqual(["completed"]), { timeout: 60_000, interval: 100 });
    await hold.taken();
    const callsBeforeKill = model.requests.filter(asked).length;
    const second = await analystProcess();
    await first.stop("SIGKILL");
    await hold.release();

    const settled = await vi.waitFor(async () => {
      const t = await database.db.prisma.task.findUniqueOrThrow({ where: { id: task.id } });
      if (t.analysing) throw new Error(`still analysing\n--- second analyst ---\n${second.output()}`);
      return t;
    }, { timeout: 90_000, interval: 100 });
    expect(settled).toMatchObject({ status: "collecting", pendingTurns: 0 });
    expect(model.requests.filter(asked)).toHaveLength(callsBeforeKill);
    expect((await repos.traces.list(task.id)).map((t) => t.outcome)).toEqual(["completed"]);
    const told = await database.db.prisma.notification.findMany({ where: { taskId: task.id } });
    expect(told.map((n) => [n.template, n.params])).toEqual([["task.questions", expect.objectContaining({ questions: expect.stringContaining("Which repository?") })]]);
  }, 150_000);
});
