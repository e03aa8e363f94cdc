import { commitToBare, reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { holdPushes } from "../support/push-hold.ts";
import { DEV, GiteaE2eHarness, REPO, REVIEWER } from "./gitea-e2e-harness.ts";

/**
 * Retries go on from what already happened (Gitea door): a process is SIGKILLed at the worst
 * moment — its outside effect made (the push reached the remote, the PR was created), the effect
 * never recorded. The command still succeeds, the model is not run again, the branch has the
 * work once, there is one PR and one status comment.
 */
const h = new GiteaE2eHarness();

beforeAll(async () => {
  await h.start(["ingress", "dev", "reviewer", "notifier"]);
  await h.git(["config", "core.logAllRefUpdates", "always"]);
}, 180_000);

afterAll(async () => {
  await h.stop();
});

function devCalls(text: string) {
  return h.model.requests.filter((r) => r.system.includes(DEV) && r.userTexts.some((t) => t.includes(text)));
}

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

/** SIGKILLs the service, lets `meanwhile` happen while it is down, and starts it again. */
async function killAndRestart(name: "dev" | "ingress", meanwhile: () => unknown) {
  await h.running.get(name)!.stop("SIGKILL");
  h.running.delete(name);
  await meanwhile();
  h.running.set(name, await h.startService(name));
}

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
});
