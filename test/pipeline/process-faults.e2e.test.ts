import { reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHATS, DEV, PipelineHarness, REVIEWER, waitFor } from "./pipeline-harness.ts";

/**
 * Faults across processes during a dev run: the dev service SIGKILLed mid-run (the job comes
 * back, resumes the dead attempt's session — one session per step — and pushes the round once),
 * and opencode itself killed mid-run (the task fails with a clear reason and a postmortem,
 * nothing hangs).
 */
const h = new PipelineHarness();

beforeAll(async () => {
  // Its own opencode: one test stops it.
  await h.start(["ingress", "dev", "reviewer", "notifier", "postmortem"], {}, undefined, { own: true });
}, 180_000);

afterAll(async () => {
  await h.stop();
});

/** Waits until the model was asked to go on after the agent's first tool call in the task. */
function afterFirstTool(title: string) {
  return waitFor(h, async () =>
    h.model.requests.find((r) => r.isToolResult && r.system.includes(DEV) && r.userTexts.some((t) => t.includes(title))),
    120_000,
  );
}

describe("process faults during a dev run", () => {
  it("dev SIGKILLed mid-run: the retried job resumes the same session, never two at once, and pushes the round once", async () => {
    const chat = CHATS[0]!;
    await h.repo("acme/crash");
    // Every ref update the remote takes is logged: a second push of the round would show.
    await h.git("acme/crash", ["config", "core.logAllRefUpdates", "always"]);
    const title = "Survive a dev crash";
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: title },
      // The first attempt writes a file, then its process dies while the model thinks.
      reply: [reply.write("acme/crash/first.txt", "first\n"), reply.json({ summary: "never seen", done: true }, { delayMs: 120_000 })],
    });
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: title },
      reply: [reply.write("acme/crash/second.txt", "second\n"), reply.json({ summary: "both files", done: true })],
    });
    h.model.addRule({
      match: { systemIncludes: REVIEWER, promptIncludes: title },
      reply: [reply.json({ passed: true, summary: "fine", findings: [] })],
    });
    const taskId = await h.approvedTask(chat, { title, repos: ["acme/crash"] });
    const stuck = await afterFirstTool(title);

    await h.running.get("dev")!.stop("SIGKILL");
    h.running.delete("dev");
    h.running.set("dev", await h.startService("dev"));

    const texts = await h.waitForText(chat, "is done", 150_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
    const steps = texts.filter((t) => t.includes(`#${taskId}`));
    expect(steps.filter((t) => t.includes("the changes are pushed"))).toHaveLength(1);
    expect(steps.at(-1)).toContain("is done");

    // One session for the step: the dead attempt's run is closed as interrupted, the retry went
    // on in the same session, and the call the dead attempt was waiting on was hung up on.
    const devRuns = (await h.traces(taskId)).filter((t) => t.agent === "dev");
    expect(devRuns.map((t) => [t.round, t.outcome, t.sessionId])).toEqual([
      [1, "interrupted", stuck.sessionId],
      [1, "completed", stuck.sessionId],
    ]);
    expect(stuck.aborted).toBe(true);
    const hungUpAt = stuck.abortedAt!;
    const devRequests = h.model.requests.filter((r) => r.system.includes(DEV) && r.userTexts.some((t) => t.includes(title)));
    expect(new Set(devRequests.map((r) => r.sessionId))).toEqual(new Set([stuck.sessionId]));
    const resumed = devRequests.filter((r) => r.seq > stuck.seq);
    expect(resumed.length).toBeGreaterThan(0);
    // Never two at once: the resumed run asked the model only after the dead attempt's call ended.
    for (const request of resumed) expect(request.receivedAt).toBeGreaterThanOrEqual(hungUpAt);

    // The round was pushed once, with both files, as one commit.
    const task = await h.task(taskId);
    expect(task.status).toBe("success");
    const branch = task.branch!;
    const pushes = await h.git("acme/crash", ["reflog", "show", "--format=%H", `refs/heads/${branch}`]);
    expect(pushes.trim().split("\n").filter(Boolean)).toHaveLength(1);
    expect(await h.git("acme/crash", ["show", `refs/heads/${branch}:first.txt`])).toBe("first\n");
    expect(await h.git("acme/crash", ["show", `refs/heads/${branch}:second.txt`])).toBe("second\n");
    const log = await h.git("acme/crash", ["log", "--format=%b", `main..refs/heads/${branch}`]);
    expect(log.trim().split(/\n+/)).toEqual([`ratatoskr task #${taskId}, round 1`]);
  }, 300_000);

  it("opencode killed mid-run: the task fails with a clear reason and a postmortem note, nothing hangs", async () => {
    const chat = CHATS[1]!;
    await h.repo("acme/lost");
    const title = "Lose the agent server";
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: title },
      reply: [reply.write("acme/lost/first.txt", "first\n"), reply.json({ summary: "never seen", done: true }, { delayMs: 120_000 })],
    });
    const taskId = await h.approvedTask(chat, { title, repos: ["acme/lost"] });
    await afterFirstTool(title);
    const killedAt = Date.now();
    await h.opencode.stop();

    const texts = await h.waitForText(chat, "failed", 120_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
    const failed = texts.filter((t) => t.includes(`#${taskId}`)).find((t) => t.includes("failed"))!;
    expect(failed).toMatch(/dev/i);
    expect(failed).toMatch(/opencode|agent server|unreachable|ECONNREFUSED|fetch failed/i);
    const task = await h.task(taskId);
    expect(task.status).toBe("failed");
    expect(Date.now() - killedAt).toBeLessThan(120_000);
    // The postmortem cannot reach opencode either: the person is told so instead of nothing.
    await h.waitForText(chat, "analysis of what went wrong is unavailable", 120_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
    const devRuns = (await h.traces(taskId)).filter((t) => t.agent === "dev");
    expect(devRuns.every((t) => t.endedAt !== null)).toBe(true);
  }, 300_000);
});
