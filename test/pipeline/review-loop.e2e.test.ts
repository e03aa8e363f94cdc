import { reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHATS, DEV, PipelineHarness, REVIEWER } from "./pipeline-harness.ts";

/**
 * P1–P3, P7 across processes: an approved task is implemented by the dev agent through a real
 * tool call, committed and pushed to the bare remote, reviewed, and the person is told each step.
 */
const h = new PipelineHarness();

beforeAll(async () => {
  await h.start(["ingress", "dev", "reviewer", "notifier"]);
}, 180_000);

afterAll(async () => {
  await h.stop();
});

describe("approved work becomes reviewed, pushed code", () => {
  it("one review round: the agent's edit is pushed on the task branch and the person hears each step once, in order", async () => {
    const chat = CHATS[0]!;
    await h.repo("acme/shop");
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "Add a greeting file" },
      reply: [
        reply.write("acme/shop/greeting.txt", "Hello from Ratatoskr\n"),
        reply.json({ summary: "added greeting.txt", testsRun: "none", done: true }),
      ],
    });
    h.model.addRule({
      match: { systemIncludes: REVIEWER, promptIncludes: "Add a greeting file" },
      reply: [reply.json({ passed: true, summary: "fine", findings: [] })],
    });
    const taskId = await h.approvedTask(chat, { title: "Add a greeting file", repos: ["acme/shop"] });

    const texts = await h.waitForText(chat, "is done", 90_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
    const task = await h.task(taskId);
    expect(task.status).toBe("success");
    expect(task.branch).toMatch(new RegExp(`^ratatoskr/${taskId}-add-a-greeting-file`));

    // The remote has the branch with the agent's file, committed with the task's title and round.
    const branch = task.branch!;
    expect(await h.git("acme/shop", ["show", `refs/heads/${branch}:greeting.txt`])).toBe("Hello from Ratatoskr\n");
    const log = await h.git("acme/shop", ["log", "--format=%s|%b", `main..refs/heads/${branch}`]);
    expect(log.trim().split("\n").filter(Boolean)).toEqual([`Add a greeting file|ratatoskr task #${taskId}, round 1`]);
    const head = (await h.git("acme/shop", ["rev-parse", `refs/heads/${branch}`])).trim();

    // What the person read: each step once, in order, ending with the branch and the pushed commit.
    const steps = texts.filter((t) => t.includes(`#${taskId}`));
    const order = ["is approved", "is at work", "round 1: the changes are pushed", "is done"];
    expect(order.map((s) => steps.findIndex((t) => t.includes(s)))).toEqual([0, 1, 2, 3]);
    expect(steps).toHaveLength(4);
    expect(steps[3]).toContain(branch);
    expect(steps[3]).toContain(head.slice(0, 7));

    // Every agent run is a trace with its session, opened when the run started and closed after.
    const traces = await h.traces(taskId);
    expect(traces.map((t) => [t.agent, t.round, t.outcome])).toEqual([
      ["dev", 1, "completed"],
      ["reviewer", 1, "completed"],
    ]);
    for (const trace of traces) {
      expect(trace.sessionId).toMatch(/^ses_/);
      expect(trace.serverUrl).toBe(h.opencode.url);
      expect(trace.endedAt!.getTime()).toBeGreaterThanOrEqual(trace.startedAt.getTime());
    }
    expect(traces[1]!.prompt).toContain("+Hello from Ratatoskr");
  }, 120_000);
});
