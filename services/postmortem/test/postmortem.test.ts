import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { QUEUE, jobRequest } from "@ratatoskr/contracts";
import { reply, type ModelRequest } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { marker, PostmortemHarness, POSTMORTEM_SYSTEM_MARK, WAIT } from "./support/postmortem-harness.ts";

const BUDGET = 6_000;
let h: PostmortemHarness;

beforeAll(async () => {
  h = await PostmortemHarness.start({ POSTMORTEM_TRACE_BUDGET_CHARS: String(BUDGET) });
});
afterAll(async () => {
  await h?.stop();
});

const verdict = {
  cause: "The reviewer rejected both rounds: the test for the greeting still fails.",
  progress: "Round 2 is pushed to ratatoskr/1-greeting; the greeting change is in, its test is not.",
  nextSteps: ["Fix the failing test in test/greeting.test.ts", "Then /retry the task"],
};

describe("postmortem after a failure", () => {
  it("reads the task's runs within the budget, stores its answer as a trace and tells the person why and what to do", async () => {
    const m = marker("failed");
    h.model.addRule({ match: { systemIncludes: POSTMORTEM_SYSTEM_MARK, promptIncludes: m }, reply: [reply.json(verdict)] });
    const task = await h.runningTask(`Fix the greeting ${m}`);
    const hugeOutput = `dev started\n${"x".repeat(50_000)}\nTHE END OF THE DEV OUTPUT`;
    await h.addTrace(task.id, { agent: "dev", round: 1, prompt: `Implement ${m}`, output: hugeOutput });
    await h.addTrace(task.id, { agent: "reviewer", round: 2, prompt: "Review the diff", output: "blocking: test/greeting.test.ts fails", outcome: "completed" });
    const before = await h.transition(task.id, { type: "run.failed", reason: "review rounds exhausted (2 of 2)" });

    const notices = await h.waitForNotice(task.id, "task.postmortem");
    const notice = notices.find((n) => n.template === "task.postmortem");
    expect(notice?.params).toEqual({
      taskId: task.id,
      cause: "failed",
      why: `${verdict.cause}\n${verdict.progress}`,
      whatToDo: "• Fix the failing test in test/greeting.test.ts\n• Then /retry the task",
    });
    expect(notice?.chatId).toBe(task.chatId);
    expect(notice?.status).toBe("pending");

    const [prompt] = h.postmortemPrompts(m);
    expect(prompt?.lastUserText).toContain("review rounds exhausted (2 of 2)");
    expect(prompt?.lastUserText).toContain("blocking: test/greeting.test.ts fails");
    // The huge output is cut in the middle: its head and end survive, the prompt stays near the budget.
    expect(prompt?.lastUserText).toContain("THE END OF THE DEV OUTPUT");
    expect(prompt?.lastUserText).toMatch(/characters cut/);
    expect(prompt?.lastUserText.length).toBeLessThan(BUDGET + 3_000);

    const [trace] = await h.postmortemTraces(task.id);
    expect(trace).toMatchObject({ outcome: "completed", prompt: prompt?.lastUserText });
    expect(trace?.output).toContain(verdict.cause);
    expect(trace?.sessionId).toBe(prompt?.sessionId);

    // It never changes the task.
    const after = await h.prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(after.status).toBe("failed");
    expect(after.version).toBe(before.task.version);
  });

  it.each([
    ["push-rejected", "someone else pushed to the branch", "merge or drop it, then /retry the task"],
    ["repo-not-found", "could not be found on the git host", "give the bot's account access to it"],
    ["auth-refused", "refused the bot's credentials", "renew the bot's token"],
    ["refs-moved", "refs other than the task's branch changed", "restore them"],
  ] as const)("explains a failure with a known cause (%s) plainly, without a model run", async (cause, why, whatToDo) => {
    const m = marker(`known-${cause}`);
    const task = await h.runningTask(`Known cause ${m}`);
    await h.transition(task.id, { type: "run.failed", reason: `the failure, ${m}`, cause });

    const notice = (await h.waitForNotice(task.id, "task.postmortem")).find((n) => n.template === "task.postmortem");
    expect(notice?.params).toMatchObject({ taskId: task.id, cause: "failed", why: expect.stringContaining(why), whatToDo: expect.stringContaining(whatToDo) });
    expect(h.postmortemPrompts(m)).toEqual([]);
    expect(await h.postmortemTraces(task.id)).toEqual([]);
  });

  it("sends one postmortem per failure even when the job is delivered again", async () => {
    const m = marker("again");
    h.model.addRule({ match: { systemIncludes: POSTMORTEM_SYSTEM_MARK, promptIncludes: m }, reply: [reply.json(verdict), reply.json(verdict)] });
    const task = await h.runningTask(`Twice ${m}`);
    const failed = await h.transition(task.id, { type: "run.failed", reason: "opencode died" });
    await h.waitForNotice(task.id, "task.postmortem");

    // The same job once more (a redelivery after a worker died): it must find the message sent.
    const again = await h.host.context.queues.enqueue(
      jobRequest(QUEUE.postmortem, { v: 1, taskId: task.id, cause: "failed" }, `${task.id}-postmortem-${failed.task.version}-redelivered`),
    );
    const queue = h.host.context.queues.queues[QUEUE.postmortem];
    await vi.waitFor(async () => {
      const job = await queue.getJob(again.jobId);
      expect(await job?.isCompleted()).toBe(true);
    }, WAIT);

    expect((await h.notifications(task.id)).filter((n) => n.template.startsWith("task.postmortem"))).toHaveLength(1);
    expect(await h.postmortemTraces(task.id)).toHaveLength(1);
    expect(h.postmortemPrompts(m)).toHaveLength(1);
  });

  it("explains a timeout with /continue in mind", async () => {
    const m = marker("timeout");
    h.model.addRule({ match: { systemIncludes: POSTMORTEM_SYSTEM_MARK, promptIncludes: m }, reply: [reply.json({ cause: "The dev run made no progress for 5 minutes.", nextSteps: [`/continue`] })] });
    const task = await h.runningTask(`Slow ${m}`);
    await h.addTrace(task.id, { agent: "dev", round: 1, prompt: `Implement ${m}`, output: "", outcome: "timeout", error: "idle timeout after 300000 ms" });
    await h.transition(task.id, { type: "run.timed_out" });

    const notices = await h.waitForNotice(task.id, "task.postmortem");
    expect(notices.find((n) => n.template === "task.postmortem")?.params).toMatchObject({ cause: "timeout", why: "The dev run made no progress for 5 minutes.", whatToDo: "/continue" });
    const [prompt] = h.postmortemPrompts(m);
    expect(prompt?.lastUserText).toContain(`/continue ${task.id}`);
    expect(prompt?.lastUserText).toContain("idle timeout after 300000 ms");
    expect((await h.prisma.task.findUniqueOrThrow({ where: { id: task.id } })).status).toBe("timeout");
  });

  it("says the postmortem is unavailable when the agent gives no usable answer, and leaves the task alone", async () => {
    const m = marker("garbage");
    h.model.addRule({ match: { systemIncludes: POSTMORTEM_SYSTEM_MARK, promptIncludes: m }, reply: [reply.text("I am not sure."), reply.text("Still not JSON.")] });
    const task = await h.runningTask(`Garbage ${m}`);
    const failed = await h.transition(task.id, { type: "run.failed", reason: "dev crashed" });

    const notices = await h.waitForNotice(task.id, "task.postmortem-unavailable");
    expect(notices.filter((n) => n.template.startsWith("task.postmortem")).map((n) => n.template)).toEqual(["task.postmortem-unavailable"]);
    const [trace] = await h.postmortemTraces(task.id);
    expect(trace?.outcome).toBe("failed");
    const after = await h.prisma.task.findUniqueOrThrow({ where: { id: task.id } });
    expect({ status: after.status, version: after.version }).toEqual({ status: "failed", version: failed.task.version });
  });

  it("explains each failure of a retried task once", async () => {
    const m = marker("retried");
    h.model.addRule({ match: { systemIncludes: POSTMORTEM_SYSTEM_MARK, promptIncludes: m }, reply: [reply.json(verdict)] });
    const task = await h.runningTask(`Retried ${m}`);
    await h.transition(task.id, { type: "run.failed", reason: "first failure" });
    await h.waitForNotice(task.id, "task.postmortem");
    await h.transition(task.id, { type: "user.retried" });
    await h.transition(task.id, { type: "dev.started" });
    await h.transition(task.id, { type: "run.failed", reason: "second failure" });

    await vi.waitFor(async () => {
      expect((await h.notifications(task.id)).filter((n) => n.template === "task.postmortem")).toHaveLength(2);
    }, WAIT);
    const prompts = h.postmortemPrompts(m).map((r) => r.lastUserText);
    expect(prompts).toHaveLength(2);
    expect(prompts[0]).toContain("first failure");
    expect(prompts[1]).toContain("second failure");
  });

  it("a postmortem still running when the task is retried and fails again sends nothing; the newest failure gets its own", async () => {
    const m = marker("overtaken");
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    const about = (reason: string) => (req: ModelRequest) => req.system.includes(POSTMORTEM_SYSTEM_MARK) && req.userTexts.some((t) => t.includes(m) && t.includes(reason));
    h.model.addRule({ match: about("second failure"), reply: [reply.json({ cause: "SECOND: the tests fail again" })] });
    h.model.addRule({ match: about("first failure"), reply: [reply.json({ cause: "FIRST: the tests fail" }, { holdUntil: held })] });
    const task = await h.runningTask(`Overtaken ${m}`);
    await h.transition(task.id, { type: "run.failed", reason: "first failure" });
    await vi.waitFor(() => expect(h.model.requests.filter(about("first failure"))).toHaveLength(1), WAIT);
    await h.transition(task.id, { type: "user.retried" });
    await h.transition(task.id, { type: "dev.started" });
    await h.transition(task.id, { type: "run.failed", reason: "second failure" });
    letGo();

    await h.waitForNotice(task.id, "task.postmortem");
    const queue = h.host.context.queues.queues[QUEUE.postmortem];
    await vi.waitFor(async () => expect(await queue.getJobCounts("active", "waiting", "delayed")).toEqual({ active: 0, waiting: 0, delayed: 0 }), WAIT);
    const told = (await h.notifications(task.id)).filter((n) => n.template.startsWith("task.postmortem"));
    expect(told.map((n) => (n.params as { why?: string }).why)).toEqual(["SECOND: the tests fail again"]);
  });

  it("runs every task's postmortem in one shared directory that stays empty, not a directory per task", async () => {
    const m = marker("shared");
    h.model.addRule({ match: { systemIncludes: POSTMORTEM_SYSTEM_MARK, promptIncludes: m }, reply: [reply.json(verdict)] });
    const tasks = await Promise.all([h.runningTask(`First ${m}`), h.runningTask(`Second ${m}`)]);
    await Promise.all(tasks.map((t) => h.transition(t.id, { type: "run.failed", reason: "boom" })));
    await Promise.all(tasks.map((t) => h.waitForNotice(t.id, "task.postmortem")));

    const sessions = await Promise.all(tasks.map(async (t) => (await h.postmortemTraces(t.id))[0]?.sessionId));
    expect(new Set(sessions).size).toBe(2);
    const shared = join(h.workspace, "postmortem", "shared");
    expect(await Promise.all(sessions.map((id) => sessionDirectory(id as string)))).toEqual([shared, shared]);
    expect(await readdir(join(h.workspace, "postmortem"))).toEqual(["shared"]);
    expect(await readdir(shared)).toEqual([]);
  });
});

/** The directory opencode says a session works in. */
async function sessionDirectory(sessionId: string): Promise<string | undefined> {
  const authorization = `Basic ${Buffer.from(`opencode:${h.opencode.password}`).toString("base64")}`;
  const res = await fetch(`${h.opencode.url}/api/session/${sessionId}`, { headers: { authorization } });
  const body = (await res.json()) as { data?: { location?: { directory?: string }; directory?: string } };
  return body.data?.location?.directory ?? body.data?.directory;
}
