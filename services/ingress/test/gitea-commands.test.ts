import type { Task } from "@ratatoskr/db";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { reconcileStatusComment } from "@ratatoskr/notifier";
import { GiteaClient } from "@ratatoskr/gitea";
import { GiteaHarness, REPO, WAIT } from "./support/gitea-harness.ts";

let h: GiteaHarness;

beforeAll(async () => {
  h = await GiteaHarness.start();
});
afterAll(async () => {
  await h?.stop();
});

/** The order commands of an issue started running in, from the audit log. */
async function startOrder(tasks: Task[]): Promise<number[]> {
  const events = await h.prisma.taskEvent.findMany({
    where: { taskId: { in: tasks.map((t) => t.id) }, toStatus: "running" },
    orderBy: { id: "asc" },
  });
  return events.map((e) => e.taskId);
}

/** Stands in for the agent service: the running command finishes. */
const finish = (task: Task) => h.transition(task.id, { type: "run.succeeded" });

describe("Gitea commands", () => {
  it("runs three commands of one issue strictly in order while another issue runs alongside", async () => {
    const one = h.gitea.addIssue(REPO, "Order one").number!;
    const two = h.gitea.addIssue(REPO, "Order two").number!;
    const a = await h.command(one, "/agent plan first");
    const b = await h.command(one, "/agent discuss second", "bob");
    const c = await h.command(one, "/agent iterate third");
    const other = await h.command(two, "/agent plan elsewhere");
    await h.waitForStatus(a.id, "running");
    await h.waitForStatus(other.id, "running");
    await h.waitForStatusComment(one, b.id, "🕒 queued — position 1");
    await h.waitForStatusComment(one, c.id, "🕒 queued — position 2");
    expect((await h.prisma.task.findUniqueOrThrow({ where: { id: b.id } })).status).toBe("queued");

    await finish(a);
    await h.waitForStatus(b.id, "running");
    await h.waitForStatusComment(one, c.id, "position 1");
    await finish(b);
    await h.waitForStatus(c.id, "running");
    await finish(c);
    await finish(other);
    await h.waitForStatus(c.id, "success");
    expect(await startOrder([a, b, c])).toEqual([a.id, b.id, c.id]);
    await h.waitForStatusComment(one, a.id, "✅ done");
  });

  it("a command joining the line sends its own position only; those waiting get theirs again when they move up", async () => {
    const n = h.gitea.addIssue(REPO, "Long line").number!;
    const head = await h.command(n, "/agent plan");
    await h.waitForStatus(head.id, "running");
    const waiting = [];
    for (const word of ["one", "two", "three"]) waiting.push(await h.command(n, `/agent discuss ${word}`));
    await h.waitForStatusComment(n, waiting[2]!.id, "🕒 queued — position 3");
    // Position updates sent from here on, as "<task>-position-<n>" (the version left off).
    const enqueue = vi.spyOn(h.host.context.queues, "enqueue");
    const positionsSent = () =>
      enqueue.mock.calls
        .map(([request]) => request.jobId)
        .filter((id) => id.includes("-position-"))
        .map((id) => id.split("-").slice(0, 3).join("-"));
    try {
      const late = await h.command(n, "/agent discuss four");
      await vi.waitFor(() => expect(positionsSent()).toContain(`${late.id}-position-4`), WAIT);
      expect(positionsSent()).toEqual([`${late.id}-position-4`]);

      enqueue.mockClear();
      await finish(head);
      await h.waitForStatus(waiting[0]!.id, "running");
      await vi.waitFor(() => expect(positionsSent()).toHaveLength(3), WAIT);
      expect(positionsSent()).toEqual([
        `${waiting[1]!.id}-position-1`,
        `${waiting[2]!.id}-position-2`,
        `${late.id}-position-3`,
      ]);
      await h.waitForStatusComment(n, late.id, "🕒 queued — position 3");
      for (const task of [...waiting, late]) {
        await h.waitForStatus(task.id, "running");
        await finish(task);
      }
    } finally {
      enqueue.mockRestore();
    }
  });

  it("a burst of commands joining one line at once: each status comment ends at its own place, and they run in order", async () => {
    const n = h.gitea.addIssue(REPO, "Burst").number!;
    const head = await h.command(n, "/agent plan");
    await h.waitForStatus(head.id, "running");
    const burst = await Promise.all(["a", "b", "c", "d", "e", "f"].map((w) => h.command(n, `/agent discuss ${w}`)));
    const line = [...burst].sort((x, y) => x.id - y.id);
    for (const [i, task] of line.entries()) await h.waitForStatusComment(n, task.id, `🕒 queued — position ${i + 1}`);
    await finish(head);
    for (const [i, task] of line.entries()) {
      await h.waitForStatus(task.id, "running");
      const behind = line.slice(i + 1).map((t) => t.id);
      expect(await h.prisma.task.count({ where: { id: { in: behind }, status: { not: "queued" } } })).toBe(0);
      await finish(task);
    }
  });

  it("starts at most GITEA_MAX_RUNNING commands over all issues, and the next when one ends", async () => {
    const numbers = [1, 2, 3].map((i) => h.gitea.addIssue(REPO, `Limit ${i}`).number!);
    const tasks = [];
    for (const n of numbers) tasks.push(await h.command(n, "/agent plan"));
    await h.waitForStatus(tasks[0]!.id, "running");
    await h.waitForStatus(tasks[1]!.id, "running");
    await h.waitForStatus(tasks[2]!.id, "queued");
    await finish(tasks[0]!);
    await h.waitForStatus(tasks[2]!.id, "running");
    await finish(tasks[1]!);
    await finish(tasks[2]!);
  });

  it("refuses a waiting implement when its turn comes if an agent PR for the issue opened meanwhile", async () => {
    const n = h.gitea.addIssue(REPO, "Two implements").number!;
    const first = await h.command(n, "/agent implement");
    await h.waitForStatus(first.id, "running");
    const second = await h.command(n, "/agent implement");
    const after = await h.command(n, "/agent plan");
    await h.waitForStatus(after.id, "queued");
    await h.waitForStatus(second.id, "queued");
    // The first implement's PR (no agent runs here: the test stands in for it), then it ends.
    const pull = h.gitea.addPull(REPO, { title: "Two implements", head: `agent/issue-${n}-${first.id}` }, h.gitea.botLogin);
    await finish(first);
    const refused = await h.waitForStatus(second.id, "rejected");
    expect(refused.failureReason).toContain(pull.html_url!);
    await h.waitForStatusComment(n, second.id, "🚫 rejected", "already open");
    await h.waitForStatus(after.id, "running");
    await finish(after);
  });

  it("rejects a reader-only commenter in the status comment and runs nothing", async () => {
    const n = h.gitea.addIssue(REPO, "Readers").number!;
    const task = await h.command(n, "/agent plan", "rita");
    await h.waitForStatus(task.id, "rejected");
    await h.waitForStatusComment(
      n,
      task.id,
      "🚫 rejected",
      "@rita has read permission",
      "write, admin or owner",
    );
    expect(await h.prisma.taskEvent.count({ where: { taskId: task.id, toStatus: "running" } })).toBe(0);
  });

  it("answers an unknown subcommand with the usage", async () => {
    const n = h.gitea.addIssue(REPO, "Usage").number!;
    const task = await h.command(n, "/agent deploy now");
    await h.waitForStatusComment(
      n,
      task.id,
      "🚫 rejected",
      "`deploy` is not a command here",
      "/agent plan [message]",
    );
  });

  it("/agent status lists the running command and two waiting ones with positions", async () => {
    const n = h.gitea.addIssue(REPO, "Status").number!;
    const run = await h.command(n, "/agent plan");
    await h.waitForStatus(run.id, "running");
    const q1 = await h.command(n, "/agent discuss");
    const q2 = await h.command(n, "/agent iterate", "bob");
    await h.waitForStatus(q2.id, "queued");
    const status = await h.command(n, "/agent status");
    await h.waitForStatus(status.id, "success");
    await h.waitForStatusComment(
      n,
      status.id,
      `▶ running: \`plan\` (#${run.id}) by @alice`,
      `1. waiting: \`discuss\` (#${q1.id}) by @alice`,
      `2. waiting: \`iterate\` (#${q2.id}) by @bob`,
    );
    for (const t of [run, q1, q2]) await h.transition(t.id, { type: "user.cancelled" });
  });

  it("/agent cancel stops the running command, says so in both comments, and the next one runs", async () => {
    const n = h.gitea.addIssue(REPO, "Cancel").number!;
    const run = await h.command(n, "/agent plan");
    await h.waitForStatus(run.id, "running");
    const next = await h.command(n, "/agent discuss");
    const cancel = await h.command(n, "/agent cancel", "bob");
    await h.waitForStatus(run.id, "cancelled");
    await h.waitForStatusComment(n, run.id, "⏹️ cancelled", "cancelled by @bob");
    await h.waitForStatusComment(
      n,
      cancel.id,
      "✅ done",
      `Cancelled \`plan\` (#${run.id}) by @alice, which was running`,
    );
    await h.waitForStatus(next.id, "running");
    const cancelAgain = await h.command(n, "/agent cancel");
    await h.waitForStatus(next.id, "cancelled");
    await h.waitForStatusComment(n, cancelAgain.id, `Cancelled \`discuss\` (#${next.id})`);
  });

  it("/agent cancel right behind a command still being authorized cancels that command, which never runs", async () => {
    const n = h.gitea.addIssue(REPO, "Cancel at once").number!;
    // The plan's issue read is slow: it is still being authorized when the cancel is routed.
    h.gitea.injectFault({ method: "GET", path: new RegExp(`/issues/${n}$`), delayMs: 1_500 });
    const plan = await h.command(n, "/agent plan");
    const cancel = await h.command(n, "/agent cancel");
    await h.waitForStatus(plan.id, "cancelled");
    await h.waitForStatusComment(n, cancel.id, "✅ done", `Cancelled \`plan\` (#${plan.id}) by @alice`);
    const ran = await h.prisma.taskEvent.count({ where: { taskId: plan.id, toStatus: "running" } });
    expect(ran).toBe(0);
  });

  it("/agent status right behind a command still being authorized shows it only once it may wait in line", async () => {
    const n = h.gitea.addIssue(REPO, "Status at once").number!;
    h.gitea.injectFault({ method: "GET", path: /\/collaborators\/mallory\/permission$/, delayMs: 1_500 });
    const refused = await h.command(n, "/agent plan", "mallory");
    const status = await h.command(n, "/agent status");
    await h.waitForStatus(refused.id, "rejected");
    await h.waitForStatusComment(n, status.id, "✅ done", "Nothing is running or waiting here.");
  });

  it("a command turned away while the one behind it waits for it lets that one run", async () => {
    const n = h.gitea.addIssue(REPO, "Refused ahead").number!;
    h.gitea.injectFault({ method: "GET", path: /\/collaborators\/mallory\/permission$/, delayMs: 1_500 });
    const refused = await h.command(n, "/agent plan", "mallory");
    const next = await h.command(n, "/agent plan");
    await h.waitForStatus(next.id, "queued");
    await h.waitForStatus(refused.id, "rejected");
    await h.waitForStatus(next.id, "running");
    await finish(next);
  });

  it("recreates a deleted status comment exactly once, even with ten reconciles racing", async () => {
    const n = h.gitea.addIssue(REPO, "Deleted").number!;
    const task = await h.command(n, "/agent plan");
    await h.waitForStatus(task.id, "running");
    const first = await h.waitForStatusComment(n, task.id, "▶️ running");
    h.gitea.deleteComment(REPO, first.id!);
    const deps = {
      db: h.database.db,
      repos: h.host.context.repos,
      gitea: new GiteaClient({ baseUrl: h.gitea.url, token: h.gitea.token }),
      queues: h.host.context.queues.queues,
    };
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () => reconcileStatusComment(deps, task.id)),
    );
    expect(results.filter((r) => r.status === "fulfilled" && r.value.action === "created")).toHaveLength(1);
    await finish(task);
    const final = await h.waitForStatusComment(n, task.id, "✅ done");
    expect(final.id).not.toBe(first.id);
    expect(h.statusComments(n, task.id)).toHaveLength(1);
  });

  it("counts Elapsed and Took from the command's start, not from its last stage", async () => {
    const n = h.gitea.addIssue(REPO, "Timed").number!;
    const task = await h.command(n, "/agent plan");
    await h.waitForStatusComment(n, task.id, "▶️ running");
    // The command started 35 s ago; its plan was drafted just now (a running → running stage).
    await h.prisma.taskEvent.updateMany({
      where: { taskId: task.id, type: "command.started" },
      data: { createdAt: new Date(Date.now() - 35_000) },
    });
    await h.transition(task.id, { type: "plan.drafted", plan: "1. do it" });
    const gitea = new GiteaClient({ baseUrl: h.gitea.url, token: h.gitea.token });
    // Rendered after the stage (the notifier may hold the comment's lock a moment: try again).
    await vi.waitFor(() => reconcileStatusComment({ db: h.database.db, repos: h.host.context.repos, gitea, queues: h.host.context.queues.queues }, task.id), WAIT);
    expect(h.statusComments(n, task.id)[0]?.body).toMatch(/\*\*Elapsed:\*\* 3[5-9] s/);
    await finish(task);
    const done = await h.waitForStatusComment(n, task.id, "✅ done");
    expect(done.body).toMatch(/\*\*Took:\*\* 3[5-9] s/);
  }, 60_000);

  it("finds its status comment again by the hidden marker when the stored id is lost", async () => {
    const n = h.gitea.addIssue(REPO, "Marker").number!;
    const task = await h.command(n, "/agent plan");
    const shown = await h.waitForStatusComment(n, task.id, "▶️ running");
    await h.prisma.task.update({ where: { id: task.id }, data: { statusCommentId: null } });
    await finish(task);
    await vi.waitFor(async () => {
      const row = await h.prisma.task.findUniqueOrThrow({ where: { id: task.id } });
      expect(row.statusCommentId).toBe(BigInt(shown.id!));
    }, WAIT);
    await h.waitForStatusComment(n, task.id, "✅ done");
  });
});
