import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { GiteaHarness, REPO, WAIT } from "./support/gitea-harness.ts";

/**
 * `INGRESS_CONCURRENCY=0` (`NOTIFIER_CONCURRENCY=0` too): an HTTP-only replica that accepts
 * webhooks and hands their work to the queues, where replicas that take jobs pick it up.
 */
let h: GiteaHarness;

beforeAll(async () => {
  h = await GiteaHarness.start({ INGRESS_CONCURRENCY: "0", NOTIFIER_CONCURRENCY: "0" });
  h.gitea.addIssue(REPO, "Replica issue");
});
afterAll(async () => {
  await h?.stop();
});

describe("a host whose services take no jobs", () => {
  it("accepts a command and leaves its intake job waiting, with no worker on the queue", async () => {
    const { comment, deliveries } = await h.gitea.comment(REPO, 1, "alice", "/agent plan from the replica");
    expect(deliveries.map((d) => d.status)).toEqual([202]);

    const intake = h.host.context.queues.queues.intake;
    // The answer only says the delivery is stored: its task is made just after.
    const task = await h.taskOfComment(comment.id!);
    expect(task.commandMessage).toBe("from the replica");
    const job = await vi.waitFor(async () => {
      const queued = await intake.getJob(`${task.id}-route-0`);
      if (!queued) throw new Error("intake job not queued yet");
      return queued;
    }, WAIT);
    expect(await job.getState()).toBe("waiting");
    expect(await intake.getWorkers()).toEqual([]);
    expect(await h.host.context.queues.queues.notify.getWorkers()).toEqual([]);
  });
});
