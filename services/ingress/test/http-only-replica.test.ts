import { startHost, type RunningHost } from "@ratatoskr/service-host";
import { serviceTestEnv } from "@ratatoskr/testkit/vitest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ingressService } from "../src/index.ts";
import { GiteaHarness, REPO, SECRET, WAIT } from "./support/gitea-harness.ts";

/**
 * `INGRESS_CONCURRENCY=0` (`NOTIFIER_CONCURRENCY=0` too): an HTTP-only replica that accepts
 * webhooks, stores each command, and asks the replicas that take intake jobs to make the tasks.
 */
let h: GiteaHarness;
let worker: RunningHost | undefined;

beforeAll(async () => {
  h = await GiteaHarness.start({ INGRESS_CONCURRENCY: "0", NOTIFIER_CONCURRENCY: "0" });
  h.gitea.addIssue(REPO, "Replica issue");
});
afterAll(async () => {
  await worker?.shutdown("test done");
  await h?.stop();
});

describe("a host whose services take no jobs", () => {
  it("stores a command and leaves a job asking for its task; a replica that takes jobs makes and routes it", async () => {
    const { comment, deliveries } = await h.gitea.comment(REPO, 1, "alice", "/agent plan from the replica");
    expect(deliveries.map((d) => d.status)).toEqual([202]);

    const intake = h.host.context.queues.queues.intake;
    const { rows } = await h.database.db.pool.query<{ id: number; outcome: string }>(
      "SELECT id, outcome FROM webhook_deliveries WHERE comment_id = $1",
      [comment.id],
    );
    expect(rows).toHaveLength(1);
    const ask = await vi.waitFor(async () => {
      const queued = await intake.getJob(`drain-commands-${rows[0]!.id}`);
      if (!queued) throw new Error("drain job not queued yet");
      return queued;
    }, WAIT);
    expect(ask.data).toEqual({ v: 1, kind: "drain-commands", upTo: rows[0]!.id });
    expect(await ask.getState()).toBe("waiting");
    expect(await intake.getWorkers()).toEqual([]);
    expect(await h.host.context.queues.queues.notify.getWorkers()).toEqual([]);

    worker = await startHost({
      name: "ingress-worker",
      services: [ingressService],
      env: serviceTestEnv(h.database, h.redis, {
        GITEA_URL: h.gitea.url,
        GITEA_TOKEN: h.gitea.token,
        GITEA_WEBHOOK_SECRET: SECRET,
        GITEA_SWEEP_INTERVAL_MS: "0",
        GITEA_STATUS_REFRESH_MS: "0",
        BULL_BOARD_DISABLED: "true",
        LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
      }),
      handleSignals: false,
    });
    await vi.waitFor(async () => expect(await ask.getState()).toBe("completed"), WAIT);
    // The job made the task (the worker's own periodic pass comes 5 s after its start).
    expect((await intake.getJob(ask.id!))?.returnvalue).toEqual({ settled: 1 });
    const task = await h.taskOfComment(comment.id!);
    expect(task.commandMessage).toBe("from the replica");
    // Authorized (alice may write) and started: the worker replica routed what the other stored.
    await vi.waitFor(async () => {
      const now = await h.prisma.task.findUniqueOrThrow({ where: { id: task.id } });
      expect(now.status).toBe("running");
    }, WAIT);
  });
});
