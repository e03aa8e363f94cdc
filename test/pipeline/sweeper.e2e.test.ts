import { QUEUE } from "@ratatoskr/contracts";
import { reply } from "@ratatoskr/testkit";
import { UnrecoverableError, Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHATS, DEV, PipelineHarness, REVIEWER, waitFor } from "./pipeline-harness.ts";

/**
 * Postgres is the truth, Redis can be lost (issue 7 item 4) for the pipeline's steps: a task
 * waiting on a dev job Redis no longer holds gets it back and finishes; a task whose dev job
 * gave up outside its handler fails with a reason the person reads, instead of waiting forever.
 */
const h = new PipelineHarness();

beforeAll(async () => {
  // No dev service yet: the jobs wait in Redis while the test takes them away.
  await h.start(["ingress", "reviewer", "notifier"], { PIPELINE_SWEEP_INTERVAL_MS: "500", PIPELINE_SWEEP_GRACE_MS: "1000" });
}, 180_000);

afterAll(async () => {
  await h.stop();
});

async function devJobOf(taskId: number): Promise<string> {
  return waitFor(h, async () => {
    const followUp = await h.database.db.prisma.followUp.findFirst({ where: { taskId, queue: QUEUE.dev, dispatchedAt: { not: null } } });
    return followUp?.jobId;
  });
}

describe("the pipeline sweep", () => {
  it("re-queues a dev job Redis lost and settles one that gave up outside its handler", async () => {
    const dev = h.queue("dev");
    await h.repo("acme/lost");
    await h.repo("acme/dead");
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "Recover the lost job" },
      reply: [reply.write("acme/lost/found.txt", "found\n"), reply.json({ summary: "found", done: true })],
    });
    h.model.addRule({
      match: { systemIncludes: REVIEWER, promptIncludes: "Recover the lost job" },
      reply: [reply.json({ passed: true, summary: "fine", findings: [] })],
    });

    // A dev job that fails outside the handler (as one that stalled out does), never reporting back.
    const deadTask = await h.approvedTask(CHATS[0]!, { title: "Settle the dead job", repos: ["acme/dead"] });
    const deadJob = await devJobOf(deadTask);
    const killer = new Worker(
      "dev",
      async () => {
        throw new UnrecoverableError("job stalled more than allowable limit");
      },
      { connection: { url: h.redis.url }, prefix: h.redis.prefix },
    );
    await waitFor(h, async () => ((await dev.getJobState(deadJob)) === "failed" ? true : undefined));
    await killer.close();

    // A dev job Redis forgot (wiped, restarted without persistence).
    const lostTask = await h.approvedTask(CHATS[1]!, { title: "Recover the lost job", repos: ["acme/lost"] });
    const lostJob = await devJobOf(lostTask);
    await dev.remove(lostJob);
    expect(await dev.getJobState(lostJob)).toBe("unknown");

    const service = await h.startService("dev");
    h.running.set("dev", service);

    const lost = await h.waitForText(CHATS[1]!, "is done", 120_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
    expect(lost.filter((t) => t.includes(`#${lostTask}`) && t.includes("the changes are pushed"))).toHaveLength(1);
    expect(await h.task(lostTask)).toMatchObject({ status: "success" });
    expect(service.output()).toContain("dev round job missing from Redis; enqueued again from Postgres");

    const dead = await h.waitForText(CHATS[0]!, "failed", 60_000);
    // How it really ended: the job's worker died (BullMQ's stalled limit), said as such.
    expect(dead.at(-1)).toContain("the dev round was cut off: the process running it died");
    expect(dead.at(-1)).toContain("/retry");
    expect(await h.task(deadTask)).toMatchObject({ status: "failed" });
    // It never ran: no agent session was opened for it.
    expect((await h.traces(deadTask)).filter((t) => t.agent === "dev")).toEqual([]);
  }, 300_000);
});
