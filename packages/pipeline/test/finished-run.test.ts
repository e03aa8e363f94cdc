import { createRepositories, type Repositories } from "@ratatoskr/db";
import { createTestDatabase, type TestDatabase } from "@ratatoskr/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { finishedRunOf } from "../src/run/finished-run.ts";

/**
 * What a retried job finds of the run its dead attempt finished: the one every step asks before
 * it runs the model. Real traces in Postgres, as the handlers write them.
 */
let t: TestDatabase;
let repos: Repositories;

beforeAll(async () => {
  t = await createTestDatabase();
  repos = createRepositories(t.db.prisma);
});
afterAll(async () => {
  await t?.drop();
});

const schema = z.object({ passed: z.boolean() });
const JOB = "1-review-7";

async function taskWith(runs: Array<{ jobId: string | null; outcome: string; output: string; prompt?: string }>): Promise<number> {
  const task = await repos.tasks.createTelegramTask({ chatId: 4_000 + Math.floor(Math.random() * 1e6), maxTurns: 5, maxRounds: 3 });
  for (const run of runs) {
    const at = new Date();
    await repos.traces.record(task.id, { agent: "reviewer", prompt: run.prompt ?? "review this", sessionId: "ses_1", startedAt: at, endedAt: at, cost: 0.25, ...run });
  }
  return task.id;
}

const query = (taskId: number, extra: { jobId?: string | undefined; prompt?: string } = {}) => ({ taskId, agent: "reviewer", jobId: JOB, schema, ...extra });
/** opencode when no session finished a turn nobody watched. */
const NO_SESSION_ANSWER = { finishedTurn: async () => undefined };

describe("finishedRunOf", () => {
  it("gives back the verdict of a run this very job finished, with what it cost", async () => {
    const taskId = await taskWith([{ jobId: JOB, outcome: "completed", output: '{"passed":true}' }]);
    const found = await finishedRunOf(repos.traces, query(taskId), NO_SESSION_ANSWER);
    expect(found).toMatchObject({ outcome: "ok", verdict: { passed: true }, sessionId: "ses_1", trace: { cost: 0.25 } });
  });

  it("a timed-out run stays timed out", async () => {
    const taskId = await taskWith([{ jobId: JOB, outcome: "timeout", output: "" }]);
    expect(await finishedRunOf(repos.traces, query(taskId), NO_SESSION_ANSWER)).toMatchObject({ outcome: "timeout", verdict: undefined });
  });

  it("finds nothing for another job, a job without an id, a run that failed or an answer that is no verdict", async () => {
    const other = await taskWith([{ jobId: "1-review-5", outcome: "completed", output: '{"passed":true}' }]);
    expect(await finishedRunOf(repos.traces, query(other), NO_SESSION_ANSWER)).toBeUndefined();
    const mine = await taskWith([{ jobId: JOB, outcome: "completed", output: '{"passed":true}' }]);
    expect(await finishedRunOf(repos.traces, query(mine, { jobId: undefined }), NO_SESSION_ANSWER)).toBeUndefined();
    const failed = await taskWith([{ jobId: JOB, outcome: "failed", output: '{"passed":true}' }]);
    expect(await finishedRunOf(repos.traces, query(failed), NO_SESSION_ANSWER)).toBeUndefined();
    const unreadable = await taskWith([{ jobId: JOB, outcome: "completed", output: "looks fine to me" }]);
    expect(await finishedRunOf(repos.traces, query(unreadable), NO_SESSION_ANSWER)).toBeUndefined();
  });

  it("with a prompt, only a run asked exactly that: a dialogue with a message since is run again", async () => {
    const taskId = await taskWith([{ jobId: JOB, outcome: "completed", output: '{"passed":true}', prompt: "new messages: add a health check" }]);
    expect(await finishedRunOf(repos.traces, query(taskId, { prompt: "new messages: add a health check" }), NO_SESSION_ANSWER)).toMatchObject({ verdict: { passed: true } });
    expect(await finishedRunOf(repos.traces, query(taskId, { prompt: "new messages: add a health check\nand a metrics endpoint" }), NO_SESSION_ANSWER)).toBeUndefined();
  });

  describe("a run this job left unfinished (its process died mid-run)", () => {
    const tokens = { input: 120, output: 30, reasoning: 0, cacheRead: 0, cacheWrite: 0 };
    const turn = { output: '{"passed":true}', tokens, cost: 0.5, model: "fake/scripted", endedAt: new Date() };

    async function deadRun(jobId = JOB): Promise<number> {
      const task = await repos.tasks.createTelegramTask({ chatId: 4_000 + Math.floor(Math.random() * 1e6), maxTurns: 5, maxRounds: 3 });
      await repos.traces.start(task.id, { agent: "reviewer", prompt: "review this", sessionId: "ses_9", serverUrl: "http://oc:4096", startedAt: new Date(), jobId });
      return task.id;
    }

    it("whose session answered it meanwhile: the trace is completed from the session, with what it cost, and the answer reused", async () => {
      const taskId = await deadRun();
      const asked: unknown[][] = [];
      const opencode = { finishedTurn: async (...args: unknown[]) => (asked.push(args), turn) };
      expect(await finishedRunOf(repos.traces, query(taskId), opencode)).toMatchObject({ outcome: "ok", verdict: { passed: true }, sessionId: "ses_9", trace: { cost: 0.5 } });
      expect(asked).toEqual([["ses_9", "review this", "http://oc:4096"]]);
      const [trace] = await repos.traces.list(taskId);
      expect(trace).toMatchObject({ outcome: "completed", output: '{"passed":true}', cost: 0.5, tokensInput: 120, tokensOutput: 30, model: "fake/scripted" });
      expect(await repos.traces.listUnfinished(taskId, "reviewer")).toEqual([]);
    });

    it("whose session is still at it, was cut short, gave no verdict or cannot be asked: nothing, and the run stays open for the retry to resume", async () => {
      const answers = [async () => undefined, async () => ({ ...turn, output: "looks fine to me" }), async () => Promise.reject(new Error("ECONNREFUSED"))];
      for (const finishedTurn of answers) {
        const taskId = await deadRun();
        expect(await finishedRunOf(repos.traces, query(taskId), { finishedTurn })).toBeUndefined();
        expect(await repos.traces.listUnfinished(taskId, "reviewer")).toHaveLength(1);
      }
    });

    it("of another job, or asked something else: its session is not asked", async () => {
      let asked = 0;
      const opencode = { finishedTurn: async () => (asked++, turn) };
      expect(await finishedRunOf(repos.traces, query(await deadRun("1-review-5")), opencode)).toBeUndefined();
      expect(await finishedRunOf(repos.traces, query(await deadRun(), { prompt: "review this and that" }), opencode)).toBeUndefined();
      expect(asked).toBe(0);
    });
  });
});
