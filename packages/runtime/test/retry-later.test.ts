import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { jobRequest } from "@ratatoskr/contracts";
import { RetryLaterError } from "../src/index.ts";
import { createWorkerHarness, metricValue, type WorkerHarness } from "./support/worker-harness.ts";
import { waitFor } from "./support/wait-for.ts";

let h: WorkerHarness;
beforeEach(() => {
  h = createWorkerHarness();
});
afterEach(async () => {
  await h.cleanup();
});

describe("RetryLaterError", () => {
  it("delays the job by the asked time, as often as asked, without using up its attempts", async () => {
    const DELAY_MS = 300;
    const calls: number[] = [];
    // dev jobs have 2 attempts: three counted retries would fail the job.
    h.startWorker("dev", async () => {
      calls.push(Date.now());
      if (calls.length <= 3) throw new RetryLaterError(DELAY_MS, "chat 7 is busy");
      return "done";
    });
    await h.queues.enqueue(jobRequest("dev", { v: 1, taskId: 3, kind: "implement", round: 1 }, "3-dev-1"));

    const job = await waitFor(
      async () => {
        const found = await h.queues.queues.dev.getJob("3-dev-1");
        return found?.finishedOn ? found : undefined;
      },
      { what: "dev job 3-dev-1 to finish" },
    );
    expect(await job.getState()).toBe("completed");
    expect(job.returnvalue).toBe("done");
    expect(job.attemptsMade).toBe(1);
    expect(calls).toHaveLength(4);
    const gaps = calls.slice(1).map((time, i) => time - (calls[i] as number));
    // Timers may fire a few ms early relative to Date.now() of another process; never much.
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(DELAY_MS - 20);
    expect(
      await metricValue(h.metrics, "ratatoskr_job_failures_total", { queue: "dev", reason: "transient" }),
    ).toBe(0);
    expect(
      await metricValue(h.metrics, "ratatoskr_jobs_processed_total", { queue: "dev", outcome: "retrying" }),
    ).toBe(3);
  });
});
