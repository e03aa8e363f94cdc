import { commitToBare, reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { holdPushes } from "../support/push-hold.ts";
import { holdTaskRecords } from "../support/record-hold.ts";
import { DEV, GiteaE2eHarness, PLANNER, POSTMORTEM, REPO, REVIEWER, type GiteaService } from "./gitea-e2e-harness.ts";

/**
 * Retries go on from what already happened (Gitea door): a process is SIGKILLed at the worst
 * moment — its outside effect made (the push reached the remote, the PR or a comment was created,
 * the planner's or the postmortem's model run finished), the effect never recorded. The command
 * still ends as it would have, the model is not run again, the branch has the work once, and
 * there is one PR, one plan comment, one postmortem reply and one status comment.
 */
const h = new GiteaE2eHarness();

beforeAll(async () => {
  await h.start(["ingress", "analyst", "dev", "reviewer", "notifier", "postmortem"]);
  await h.git(["config", "core.logAllRefUpdates", "always"]);
}, 180_000);

afterAll(async () => {
  await h.stop();
});

function calls(agent: string, text: string) {
  return h.model.requests.filter((r) => r.system.includes(agent) && r.userTexts.some((t) => t.includes(text)));
}
const devCalls = (text: string) => calls(DEV, text);

/** Waits until the command is final; its status and reason are asserted by the caller. */
async function settled(taskId: number) {
  return vi
    .waitFor(
      async () => {
        const task = await h.task(taskId);
        if (!["success", "failed", "cancelled", "rejected"].includes(task.status)) throw new Error(`task ${taskId} is ${task.status}`);
        return task;
      },
      { timeout: 180_000, interval: 200 },
    )
    .catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
}

/** SIGKILLs the service, lets `meanwhile` happen while it is down, and starts it again (ingress on its port: the webhook reaches it). */
async function killAndRestart(name: GiteaService, meanwhile: () => unknown) {
  const killed = h.running.get(name)!;
  await killed.stop("SIGKILL");
  h.running.delete(name);
  await meanwhile();
  h.running.set(name, await h.startService(name, name === "ingress" ? { HTTP_PORT: new URL(killed.url).port } : {}));
}

/**
 * Lets `agent`'s held answer go while the task's row is held, and waits until its run finished
 * and the process waits to record it: the worst moment to die. Returns the hold to release.
 */
async function runFinishedUnrecorded(taskId: number, agent: string, answer: () => void) {
  const hold = await holdTaskRecords(h.database, taskId);
  answer();
  await vi.waitFor(async () => expect((await h.traces(taskId)).filter((t) => t.agent === agent).map((t) => t.outcome)).toEqual(["completed"]), {
    timeout: 120_000,
    interval: 100,
  });
  await hold.taken();
  return hold;
}

/** The next comment posted on `number` is made, and its answer held until the returned function is called. */
async function holdNextComment(number: number): Promise<() => void> {
  let release!: () => void;
  h.gitea.injectFault({ method: "POST", path: new RegExp(`/issues/${number}/comments$`), holdAnswerUntil: new Promise<void>((resolve) => (release = resolve)) });
  return release;
}

const commentsWith = (number: number, text: string) => h.gitea.commentsOf(REPO, number).filter((c) => (c.body ?? "").includes(text));

function pullsFrom(branch: string) {
  return h.gitea.issues.pulls(h.gitea.repos.find("acme", "shop")!).filter((p) => p.head?.ref === branch);
}

describe("a retry after an outside effect", () => {
  it("implement: dev killed after its push reached the remote — the round counts, no second model run, one PR", async () => {
    const title = "Keep the pushed work";
    const issue = h.gitea.addIssue(REPO, title, "kept.txt please").number!;
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: title },
      reply: [reply.write("acme/shop/kept.txt", "kept\n"), reply.json({ summary: "added kept.txt", done: true })],
    });
    h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: title }, reply: [reply.json({ passed: true, summary: "ok", findings: [] })] });
    const hold = await holdPushes(h.gitea.bareDir(REPO));

    const task = await h.command(issue, "/agent implement");
    await hold.taken();
    const callsBeforeKill = devCalls(title).length;
    await killAndRestart("dev", () => hold.release());

    const done = await settled(task.id);
    expect(done.failureReason ?? "").toBe("");
    expect(done.status).toBe("success");
    expect(devCalls(title)).toHaveLength(callsBeforeKill);
    const branch = `agent/issue-${issue}-${task.id}`;
    expect(await h.git(["show", `refs/heads/${branch}:kept.txt`])).toBe("kept\n");
    expect((await h.git(["log", "--format=%s", `main..refs/heads/${branch}`])).trim().split("\n")).toEqual([`agent: ${title}`]);
    expect((await h.git(["reflog", "show", "--format=%H", `refs/heads/${branch}`])).trim().split("\n")).toHaveLength(1);
    expect(pullsFrom(branch)).toHaveLength(1);
    await h.waitForStatusComment(issue, task.id, ["✅ done"]);
    expect(h.statusComments(issue, task.id)).toHaveLength(1);
  }, 330_000);

  it("fix: dev killed after its commit reached the PR head — one commit, the command succeeds, no second model run", async () => {
    const bare = h.gitea.bareDir(REPO);
    const head = await commitToBare(bare, "feature/calm", { "calm.txt": "HELLO\n" }, "a person's change");
    const pull = h.gitea.addPull(REPO, { title: "Calm down", body: "Make it calm.", head: "feature/calm" }, "bob");
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "make it lowercase" },
      reply: [reply.write("acme/shop/calm.txt", "hello\n"), reply.json({ summary: "lowercased", done: true })],
    });
    const hold = await holdPushes(bare);

    const fix = await h.command(pull.number!, "/agent fix make it lowercase");
    await hold.taken();
    const callsBeforeKill = devCalls("make it lowercase").length;
    await killAndRestart("dev", () => hold.release());

    const done = await settled(fix.id);
    expect(done.failureReason ?? "").toBe("");
    expect(done.status).toBe("success");
    expect(devCalls("make it lowercase")).toHaveLength(callsBeforeKill);
    expect(await h.git(["show", "refs/heads/feature/calm:calm.txt"])).toBe("hello\n");
    expect((await h.git(["log", "--format=%s", `${head}..refs/heads/feature/calm`])).trim().split("\n")).toEqual(["agent: fix Calm down"]);
    const pushed = (await h.git(["rev-parse", "refs/heads/feature/calm"])).trim();
    await h.waitForStatusComment(pull.number!, fix.id, ["✅ done", pushed.slice(0, 7)]);
    expect(h.statusComments(pull.number!, fix.id)).toHaveLength(1);
  }, 330_000);

  it("publish: ingress killed after Gitea created the PR, before it answered — the retry finds the PR, one PR", async () => {
    const title = "Open the PR once";
    const issue = h.gitea.addIssue(REPO, title, "once.txt please").number!;
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: title },
      reply: [reply.write("acme/shop/once.txt", "once\n"), reply.json({ summary: "added once.txt", done: true })],
    });
    h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: title }, reply: [reply.json({ passed: true, summary: "ok", findings: [] })] });
    let release!: () => void;
    h.gitea.injectFault({ method: "POST", path: /\/pulls$/, holdAnswerUntil: new Promise<void>((resolve) => (release = resolve)) });

    const task = await h.command(issue, "/agent implement");
    const branch = `agent/issue-${issue}-${task.id}`;
    await vi.waitFor(() => expect(pullsFrom(branch)).toHaveLength(1), { timeout: 180_000, interval: 100 });
    await killAndRestart("ingress", release);

    const done = await settled(task.id);
    expect(done.failureReason ?? "").toBe("");
    expect(done.status).toBe("success");
    const pulls = pullsFrom(branch);
    expect(pulls).toHaveLength(1);
    expect(done.prUrl).toBe(pulls[0]!.html_url);
    await h.waitForStatusComment(issue, task.id, ["✅ done"]);
    expect(h.statusComments(issue, task.id)).toHaveLength(1);
  }, 330_000);

  it("plan: the planner killed after its run finished, ingress after Gitea took the plan comment — the planner is asked once, one plan comment", async () => {
    const title = "Plan it once";
    const issue = h.gitea.addIssue(REPO, title, "plan.md please").number!;
    let answer!: () => void;
    const asked = new Promise<void>((resolve) => (answer = resolve));
    h.model.addRule({ match: { systemIncludes: PLANNER, promptIncludes: title }, reply: [reply.json({ plan: "PLAN-ONCE: add plan.md", reply: "drafted" }, { holdUntil: asked })] });
    h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: "PLAN-ONCE" }, reply: [reply.json({ passed: true, summary: "ok", findings: [] })] });

    const task = await h.command(issue, "/agent plan");
    await vi.waitFor(() => expect(calls(PLANNER, title)).toHaveLength(1), { timeout: 150_000, interval: 100 });
    await h.waitForStatusComment(issue, task.id, []);
    const hold = await runFinishedUnrecorded(task.id, "planner", answer);
    const callsBeforeKill = calls(PLANNER, title).length;
    const commentTaken = await holdNextComment(issue);
    await killAndRestart("analyst", () => hold.release());

    // The plan passes its review and ingress posts it: ingress dies once Gitea took the comment.
    const marker = `ratatoskr:answer task=${task.id} `;
    await vi.waitFor(() => expect(commentsWith(issue, marker)).toHaveLength(1), { timeout: 180_000, interval: 100 });
    await killAndRestart("ingress", commentTaken);

    const done = await settled(task.id);
    expect(done.failureReason ?? "").toBe("");
    expect(done.status).toBe("success");
    expect(calls(PLANNER, title)).toHaveLength(callsBeforeKill);
    expect((await h.traces(task.id)).filter((t) => t.agent === "planner").map((t) => [t.round, t.outcome])).toEqual([[1, "completed"]]);
    const [posted, ...more] = commentsWith(issue, marker);
    expect(more).toEqual([]);
    expect(posted!.body).toContain("PLAN-ONCE: add plan.md");
    expect(done.resultText).toBe(`Plan posted: ${posted!.html_url}`);
    await h.waitForStatusComment(issue, task.id, ["✅ done"]);
    expect(h.statusComments(issue, task.id)).toHaveLength(1);
  }, 400_000);

  it("postmortem: killed after its run finished, the notifier after Gitea took the reply — the model is asked once, one reply", async () => {
    const title = "Explain it once";
    const issue = h.gitea.addIssue(REPO, title, "nothing to change").number!;
    h.model.addRule({ match: { systemIncludes: DEV, promptIncludes: title }, reply: [reply.json({ summary: "all fine already", done: true })] });
    let answer!: () => void;
    const asked = new Promise<void>((resolve) => (answer = resolve));
    h.model.addRule({
      match: { systemIncludes: POSTMORTEM, promptIncludes: `title: ${title}` },
      reply: [reply.json({ cause: "EXPLAINED-ONCE: nothing needed changing", nextSteps: ["Say which file should change"] }, { holdUntil: asked })],
    });

    const task = await h.command(issue, "/agent implement");
    await h.waitForStatus(task.id, "failed", 150_000);
    await vi.waitFor(() => expect(calls(POSTMORTEM, `title: ${title}`)).toHaveLength(1), { timeout: 150_000, interval: 100 });
    await h.waitForStatusComment(issue, task.id, []);
    const hold = await runFinishedUnrecorded(task.id, "postmortem", answer);
    const callsBeforeKill = calls(POSTMORTEM, `title: ${title}`).length;
    const replyTaken = await holdNextComment(issue);
    await killAndRestart("postmortem", () => hold.release());

    // The retry stores the run's answer and the notifier posts it: the notifier dies once Gitea took it.
    const replies = () => commentsWith(issue, "ratatoskr:reply").filter((c) => (c.body ?? "").includes(`#${task.id}`));
    await vi.waitFor(() => expect(replies()).toHaveLength(1), { timeout: 180_000, interval: 100 });
    await killAndRestart("notifier", replyTaken);

    const sent = () => h.database.db.prisma.notification.findMany({ where: { taskId: task.id, template: { startsWith: "task.postmortem" } } });
    await expect.poll(async () => (await sent()).map((n) => [n.template, n.status]), { timeout: 120_000, interval: 200 }).toEqual([["task.postmortem", "sent"]]);
    expect(replies()).toHaveLength(1);
    expect(replies()[0]!.body).toContain("EXPLAINED-ONCE: nothing needed changing");
    expect(calls(POSTMORTEM, `title: ${title}`)).toHaveLength(callsBeforeKill);
    expect((await h.traces(task.id)).filter((t) => t.agent === "postmortem").map((t) => t.outcome)).toEqual(["completed"]);
    expect(h.statusComments(issue, task.id)).toHaveLength(1);
  }, 400_000);
});
