import type { AgentJobProgress } from "@ratatoskr/runtime";
import { reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHATS, DEV, POSTMORTEM, PipelineHarness, REVIEWER, waitFor } from "./pipeline-harness.ts";

/**
 * P4, P6 and O6 across processes: a dev run that goes idle is stopped, its work so far is
 * committed and pushed, the task becomes `timeout`, the postmortem explains it, and `/continue N`
 * resumes the very same opencode session to a reviewed, pushed success. While the agent works,
 * its job shows stage, round, last tool and tokens in BullMQ's progress and job log.
 */
const h = new PipelineHarness();
const IDLE_MS = 6_000;

beforeAll(async () => {
  await h.start(["ingress", "dev", "reviewer", "notifier", "postmortem"], { DEV_IDLE_TIMEOUT_MS: String(IDLE_MS) });
}, 180_000);

afterAll(async () => {
  await h.stop();
});

describe("dev idle timeout and /continue", () => {
  it("pushes the partial work, says timeout, explains it, and /continue N finishes in the same session", async () => {
    const chat = CHATS[0]!;
    await h.repo("acme/idle");
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "your previous run stopped before it finished" },
      reply: [reply.write("acme/idle/second.txt", "second\n"), reply.json({ summary: "finished", done: true })],
    });
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "Write two files slowly" },
      // After the first file the model goes silent far longer than the idle timeout.
      reply: [reply.write("acme/idle/first.txt", "first\n"), reply.json({ summary: "late", done: true }, { delayMs: 120_000 })],
    });
    h.model.addRule({
      match: { systemIncludes: REVIEWER, promptIncludes: "Write two files slowly" },
      reply: [reply.json({ passed: true, summary: "fine", findings: [] })],
    });
    h.model.addRule({
      match: { systemIncludes: POSTMORTEM, promptIncludes: "Write two files slowly" },
      reply: [reply.json({ cause: "the model stopped answering", progress: "first.txt is pushed", nextSteps: ["/continue"] })],
    });
    const dev = h.queue("dev");
    const taskId = await h.approvedTask(chat, { title: "Write two files slowly", repos: ["acme/idle"] });

    // O6: while the agent waits on the model, its job reports where it is and what it used.
    const live = await waitFor(h, async () => {
      const [job] = await dev.getJobs(["active"]);
      const progress = job?.progress as Partial<AgentJobProgress> | undefined;
      return progress?.lastTool && progress.tokens ? { job: job!, progress } : undefined;
    }, 90_000);
    expect(live.progress).toMatchObject({ stage: "dev agent", round: 1, lastTool: "write" });
    expect(live.progress.sessionId).toMatch(/^ses_/);
    expect(live.progress.tokens).toBeGreaterThan(0);
    const { logs } = await dev.getJobLogs(live.job.id!);
    expect(logs.some((line) => line.includes("dev agent round 1, last tool write"))).toBe(true);

    const texts = await h.waitForText(chat, "ran out of time", 60_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
    expect(texts.at(-1)).toContain(`/continue ${taskId}`);
    const timedOut = await h.task(taskId);
    expect(timedOut.status).toBe("timeout");
    const branch = timedOut.branch!;
    // The work done before the timeout is committed and pushed.
    expect(await h.git("acme/idle", ["show", `refs/heads/${branch}:first.txt`])).toBe("first\n");
    const [firstRun] = await h.traces(taskId);
    expect(firstRun).toMatchObject({ agent: "dev", round: 1, outcome: "timeout" });
    expect(timedOut.agentSessionId).toBe(firstRun!.sessionId);

    // The postmortem explains the timeout, without changing the task.
    await h.waitForText(chat, "after the timeout", 60_000);
    expect(h.texts(chat).at(-1)).toContain("the model stopped answering");
    expect((await h.task(taskId)).status).toBe("timeout");

    h.telegram.sendText(chat, `/continue ${taskId}`);
    const done = await h.waitForText(chat, "is done", 90_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
    const steps = done.filter((t) => t.includes(`#${taskId}`));
    // Each step once, in order; the resumed run is at work again after it resumes.
    const expected = ["is approved", "is at work", "ran out of time", "after the timeout", "resumes from its saved", "is at work", "the changes are pushed", "is done"];
    expect(steps.map((t, i) => t.includes(expected[i]!)), steps.join("\n---\n")).toEqual(expected.map(() => true));

    const task = await h.task(taskId);
    expect(task.status).toBe("success");
    expect(await h.git("acme/idle", ["show", `refs/heads/${branch}:first.txt`])).toBe("first\n");
    expect(await h.git("acme/idle", ["show", `refs/heads/${branch}:second.txt`])).toBe("second\n");

    // The same opencode session went on: the continue run's trace and the model's requests say so.
    const devRuns = (await h.traces(taskId)).filter((t) => t.agent === "dev");
    expect(devRuns.map((t) => [t.outcome, t.sessionId])).toEqual([
      ["timeout", firstRun!.sessionId],
      ["completed", firstRun!.sessionId],
    ]);
    const resumed = h.model.requests.filter((r) => r.userTexts.some((t) => t.includes("your previous run stopped")));
    expect(resumed.length).toBeGreaterThan(0);
    for (const request of resumed) {
      expect(request.sessionId).toBe(firstRun!.sessionId);
      // The session remembers its task: the first prompt is part of the resumed conversation.
      expect(request.userTexts.some((t) => t.includes("Write two files slowly"))).toBe(true);
    }
  }, 240_000);
});
