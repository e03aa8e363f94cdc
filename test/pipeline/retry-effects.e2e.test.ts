import { reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { holdPushes } from "../support/push-hold.ts";
import { CHATS, DEV, PipelineHarness, REVIEWER } from "./pipeline-harness.ts";

/**
 * Retries go on from what already happened (Telegram door): the dev process is SIGKILLed at the
 * worst moment — its push reached the remote, the round was never reported. The retried job
 * finds the run its dead attempt finished and the round's commit on the branch: the model is not
 * run again, the branch keeps one push, and the person hears each step once.
 */
const h = new PipelineHarness();

beforeAll(async () => {
  await h.start(["ingress", "dev", "reviewer", "notifier"]);
}, 180_000);

afterAll(async () => {
  await h.stop();
});

function devCalls(title: string) {
  return h.model.requests.filter((r) => r.system.includes(DEV) && r.userTexts.some((t) => t.includes(title)));
}

describe("a retry after an outside effect", () => {
  it("dev killed after its push reached the remote: the round counts, the model runs once, the task succeeds", async () => {
    const chat = CHATS[0]!;
    const repo = "acme/pushed";
    await h.repo(repo);
    await h.git(repo, ["config", "core.logAllRefUpdates", "always"]);
    const hold = await holdPushes(h.bare(repo));
    const title = "Survive a kill after the push";
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: title },
      reply: [reply.write(`${repo}/done.txt`, "done\n"), reply.json({ summary: "wrote done.txt", done: true })],
    });
    h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: title }, reply: [reply.json({ passed: true, summary: "fine", findings: [] })] });
    const taskId = await h.approvedTask(chat, { title, repos: [repo] });

    await hold.taken();
    const callsBeforeKill = devCalls(title).length;
    await h.running.get("dev")!.stop("SIGKILL");
    h.running.delete("dev");
    await hold.release();
    h.running.set("dev", await h.startService("dev"));

    await h.telegram
      .waitForMessages(chat, (r) => r.plainText.includes(`#${taskId}`) && /is done|failed/.test(r.plainText), { timeoutMs: 150_000, kind: "sent" })
      .catch((err: unknown) => {
        throw new Error(`${String(err)}\n${h.logs()}`);
      });
    const task = await h.task(taskId);
    expect(task.failureReason ?? "").toBe("");
    expect(task.status).toBe("success");

    // One model run: the retry asked the model nothing, and one dev run is on record.
    expect(devCalls(title)).toHaveLength(callsBeforeKill);
    const devRuns = (await h.traces(taskId)).filter((t) => t.agent === "dev");
    expect(devRuns.map((t) => [t.round, t.outcome])).toEqual([[1, "completed"]]);

    // The branch has the work once: one push, one commit of round 1.
    const branch = task.branch!;
    expect(await h.git(repo, ["show", `refs/heads/${branch}:done.txt`])).toBe("done\n");
    const pushes = await h.git(repo, ["reflog", "show", "--format=%H", `refs/heads/${branch}`]);
    expect(pushes.trim().split("\n").filter(Boolean)).toHaveLength(1);
    const log = await h.git(repo, ["log", "--format=%b", `main..refs/heads/${branch}`]);
    expect(log.trim().split(/\n+/)).toEqual([`ratatoskr task #${taskId}, round 1`]);

    // The person was told each step once.
    const steps = h.texts(chat).filter((t) => t.includes(`#${taskId}`));
    expect(steps.filter((t) => t.includes("the changes are pushed"))).toHaveLength(1);
    expect(steps.filter((t) => t.includes("is done"))).toHaveLength(1);
  }, 300_000);
});
