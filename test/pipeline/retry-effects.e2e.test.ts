import { reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { holdPushes } from "../support/push-hold.ts";
import { holdTaskRecords } from "../support/record-hold.ts";
import { CHATS, DEV, PipelineHarness, REVIEWER, waitFor } from "./pipeline-harness.ts";

/**
 * Retries go on from what already happened (Telegram door): a process is SIGKILLed at the worst
 * moment — its effect made (the dev's push reached the remote; the reviewer's model run finished;
 * the model answered the dev's run while the dev was down), never recorded. The retried job finds
 * the run its dead attempt finished (and the round's commit on the branch): the model is not run
 * again, the branch keeps one push, and the person hears each step once.
 */
const h = new PipelineHarness();

beforeAll(async () => {
  await h.start(["ingress", "dev", "reviewer", "notifier"]);
}, 180_000);

afterAll(async () => {
  await h.stop();
});

function calls(agent: string, title: string) {
  return h.model.requests.filter((r) => r.system.includes(agent) && r.userTexts.some((t) => t.includes(title)));
}
const devCalls = (title: string) => calls(DEV, title);

/** Waits until the task is done or failed, with the services' logs when it is not. */
async function finished(chat: number, taskId: number) {
  await h.telegram
    .waitForMessages(chat, (r) => r.plainText.includes(`#${taskId}`) && /is done|failed/.test(r.plainText), { timeoutMs: 150_000, kind: "sent" })
    .catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
  return h.task(taskId);
}

/** Whether opencode runs no turn of the session any more (it finished or stopped its run). */
async function idle(sessionId: string): Promise<boolean> {
  const authorization = `Basic ${Buffer.from(`opencode:${h.opencode.password}`).toString("base64")}`;
  const res = await fetch(`${h.opencode.url}/api/session/active`, { headers: { authorization } });
  return !(sessionId in ((await res.json()) as { data: Record<string, unknown> }).data);
}

async function restart(name: "dev" | "reviewer", meanwhile: () => Promise<void>) {
  await h.running.get(name)!.stop("SIGKILL");
  h.running.delete(name);
  await meanwhile();
  h.running.set(name, await h.startService(name));
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
    await restart("dev", () => hold.release());

    const task = await finished(chat, taskId);
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

  it("reviewer killed after its run finished, before its verdict was recorded: the verdict stands, the model is not asked again", async () => {
    const chat = CHATS[1]!;
    const repo = "acme/judged";
    await h.repo(repo);
    const title = "Survive a kill after the review";
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: title },
      reply: [reply.write(`${repo}/judged.txt`, "judged\n"), reply.json({ summary: "wrote judged.txt", done: true })],
    });
    let answer!: () => void;
    const asked = new Promise<void>((resolve) => (answer = resolve));
    h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: title }, reply: [reply.json({ passed: true, summary: "fine", findings: [] }, { holdUntil: asked })] });
    const taskId = await h.approvedTask(chat, { title, repos: [repo] });

    // The review's session is open and waits on the model: its verdict will find the task's row held.
    await waitFor(h, async () => calls(REVIEWER, title)[0], 150_000);
    const hold = await holdTaskRecords(h.database, taskId);
    answer();
    await waitFor(h, async () => (await h.traces(taskId)).find((t) => t.agent === "reviewer" && t.outcome === "completed"));
    await hold.taken();
    const callsBeforeKill = calls(REVIEWER, title).length;
    await restart("reviewer", () => hold.release());

    const task = await finished(chat, taskId);
    expect(task.failureReason ?? "").toBe("");
    expect(task.status).toBe("success");
    // One review run, paid once: the retry reported its verdict without asking the model.
    expect(calls(REVIEWER, title)).toHaveLength(callsBeforeKill);
    const reviews = (await h.traces(taskId)).filter((t) => t.agent === "reviewer");
    expect(reviews.map((t) => [t.round, t.outcome])).toEqual([[1, "completed"]]);
    const events = (await h.database.db.prisma.taskEvent.findMany({ where: { taskId } })).map((e) => e.type);
    expect(events.filter((e) => e.startsWith("review."))).toEqual(["review.passed"]);
    const steps = h.texts(chat).filter((t) => t.includes(`#${taskId}`));
    expect(steps.filter((t) => t.includes("is done"))).toHaveLength(1);
  }, 300_000);

  it("dev killed mid-run, its run finished in opencode while the dev was down: the retry takes that answer, the model is not asked again", async () => {
    const chat = CHATS[2]!;
    const repo = "acme/answered";
    await h.repo(repo);
    await h.git(repo, ["config", "core.logAllRefUpdates", "always"]);
    const title = "Survive a kill while the model answers";
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: title },
      reply: [reply.write(`${repo}/answered.txt`, "answered\n"), reply.json({ summary: "wrote answered.txt", done: true }, { holdUntil: answered })],
    });
    h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: title }, reply: [reply.json({ passed: true, summary: "fine", findings: [] })] });
    const taskId = await h.approvedTask(chat, { title, repos: [repo] });

    // The run waits on the model's last answer; the dev dies, and the answer comes while it is down.
    const held = await waitFor(h, async () => devCalls(title).find((r) => r.turnIndex === 1), 150_000);
    await restart("dev", async () => {
      answer();
      await waitFor(h, async () => (held.endedAt !== undefined && (await idle(held.sessionId!)) ? true : undefined));
    });

    const task = await finished(chat, taskId);
    expect(task.failureReason ?? "").toBe("");
    expect(task.status).toBe("success");
    // The model answered each call once: the retry asked it nothing, and one dev run is on record.
    expect(devCalls(title).map((r) => [r.turnIndex, r.aborted])).toEqual([[0, false], [1, false]]);
    const devRuns = (await h.traces(taskId)).filter((t) => t.agent === "dev");
    expect(devRuns.map((t) => [t.round, t.outcome, t.sessionId])).toEqual([[1, "completed", held.sessionId]]);
    // The run's work is on the branch, pushed once; the person heard each step once.
    const branch = task.branch!;
    expect(await h.git(repo, ["show", `refs/heads/${branch}:answered.txt`])).toBe("answered\n");
    const pushes = await h.git(repo, ["reflog", "show", "--format=%H", `refs/heads/${branch}`]);
    expect(pushes.trim().split("\n").filter(Boolean)).toHaveLength(1);
    const steps = h.texts(chat).filter((t) => t.includes(`#${taskId}`));
    expect(steps.filter((t) => t.includes("the changes are pushed"))).toHaveLength(1);
    expect(steps.filter((t) => t.includes("is done"))).toHaveLength(1);
  }, 300_000);
});
