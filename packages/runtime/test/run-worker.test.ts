import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Queue } from "bullmq";
import { jobRequest } from "@ratatoskr/contracts";
import { PermanentError, assertHandlers, runWorkers, skipped, type JobHandlerMap } from "../src/index.ts";
import { createWorkerHarness, metricValue, type WorkerHarness } from "./support/worker-harness.ts";
import { waitFor } from "./support/wait-for.ts";

let h: WorkerHarness;
beforeEach(() => {
  h = createWorkerHarness();
});
afterEach(async () => {
  await h.cleanup();
});

async function finished(queue: "dev" | "review" | "notify" | "postmortem", jobId: string) {
  return waitFor(
    async () => {
      const job = await h.queues.queues[queue].getJob(jobId);
      return job?.finishedOn ? job : undefined;
    },
    { what: `${queue} job ${jobId} to finish` },
  );
}

describe("runWorker", () => {
  it("fails a job whose payload breaks its schema at once, with the validation message, without retrying", async () => {
    const handler = vi.fn(async () => "never");
    h.startWorker("dev", handler);
    // Written straight to the queue, as an older or buggy producer would.
    const untyped: Queue = h.queues.queues.dev;
    await untyped.add("run-dev", { v: 1, taskId: "seven", kind: "implement", round: 1 }, { jobId: "bad-1" });

    const job = await finished("dev", "bad-1");
    expect(await job.getState()).toBe("failed");
    expect(job.failedReason).toMatch(/^invalid dev job payload: taskId: /);
    expect(job.attemptsMade).toBe(1);
    expect(job.opts.attempts).toBe(2);
    expect(handler).not.toHaveBeenCalled();
    expect(
      await metricValue(h.metrics, "ratatoskr_job_failures_total", { queue: "dev", reason: "payload" }),
    ).toBe(1);
  });

  it("aborts the handler's signal when the job is cancelled, whether it read the signal before or after", async () => {
    const seen: string[] = [];
    let started = 0;
    const handle = h.startWorker(
      "notify",
      async (_data, ctx) => {
        started += 1;
        const early = started === 1 ? ctx.signal : undefined;
        await waitFor(async () => (handle.cancel(ctx.job.id!, "stop please") ? true : undefined), {
          what: "the job to be cancellable",
        });
        const signal = early ?? ctx.signal;
        seen.push(`${signal.aborted}:${String(signal.reason)}`);
        throw new PermanentError("cancelled");
      },
      { concurrency: 1 },
    );
    await h.queues.enqueue(jobRequest("notify", { v: 1, kind: "message", notificationId: 1 }, "1-notify-1"));
    await h.queues.enqueue(jobRequest("notify", { v: 1, kind: "message", notificationId: 2 }, "2-notify-1"));

    await finished("notify", "1-notify-1");
    await finished("notify", "2-notify-1");
    expect(seen).toEqual(["true:stop please", "true:stop please"]);
  });

  it("retries a transient error with backoff until the job completes", async () => {
    let calls = 0;
    h.startWorker("notify", async () => {
      calls += 1;
      if (calls < 3) throw new Error("telegram answered 502");
      return { delivered: true };
    });
    await h.queues.enqueue(jobRequest("notify", { v: 1, kind: "message", notificationId: 9 }, "9-notify-1"));

    const job = await finished("notify", "9-notify-1");
    expect(await job.getState()).toBe("completed");
    expect(job.returnvalue).toEqual({ delivered: true });
    expect(calls).toBe(3);
    expect(
      await metricValue(h.metrics, "ratatoskr_job_failures_total", { queue: "notify", reason: "transient" }),
    ).toBe(2);
    expect(
      await metricValue(h.metrics, "ratatoskr_jobs_processed_total", {
        queue: "notify",
        outcome: "retrying",
      }),
    ).toBe(2);
    expect(
      await metricValue(h.metrics, "ratatoskr_jobs_processed_total", {
        queue: "notify",
        outcome: "completed",
      }),
    ).toBe(1);
  });

  it("waits out a database outage without using the job's attempts", async () => {
    let calls = 0;
    h.startWorker(
      "review",
      async () => {
        calls += 1;
        // More outage failures than the review queue has attempts (2).
        if (calls <= 4) throw Object.assign(new Error("Can't reach database server at 127.0.0.1:5432"), { code: "P1001" });
        return { reviewed: true };
      },
      { outageDelayMs: 20 },
    );
    await h.queues.enqueue(jobRequest("review", { v: 1, taskId: 6, kind: "diff", round: 1 }, "6-review-1"));

    const job = await finished("review", "6-review-1");
    expect(await job.getState()).toBe("completed");
    expect(calls).toBe(5);
    // Only the run that succeeded counts: the four waits used none of the two attempts.
    expect(job.attemptsMade).toBe(1);
    const waits = h.captured.lines().filter((l) => String(l.msg).includes("outage"));
    expect(waits.map((l) => l.level)).toEqual(["warn", "debug", "debug", "debug"]);
  });

  it("fails a transient error for good once its attempts are used up", async () => {
    const handler = vi.fn(async () => {
      throw new Error("opencode answered 503");
    });
    h.startWorker("review", handler);
    await h.queues.enqueue(jobRequest("review", { v: 1, taskId: 5, kind: "diff", round: 1 }, "5-review-1"));

    const job = await finished("review", "5-review-1");
    expect(await job.getState()).toBe("failed");
    expect(handler).toHaveBeenCalledTimes(2);
    expect(job.failedReason).toBe("opencode answered 503");
    expect(
      await metricValue(h.metrics, "ratatoskr_jobs_processed_total", { queue: "review", outcome: "failed" }),
    ).toBe(1);
  });

  it.each([
    ["a PermanentError", () => new PermanentError("repository o/r does not exist")],
    [
      "an error marked permanent",
      () => Object.assign(new Error("repository o/r does not exist"), { permanent: true }),
    ],
  ])("does not retry %s", async (_kind, makeError) => {
    const handler = vi.fn(async () => {
      throw makeError();
    });
    h.startWorker("notify", handler);
    await h.queues.enqueue(jobRequest("notify", { v: 1, kind: "gitea-status", taskId: 8 }, "8-notify-1"));

    const job = await finished("notify", "8-notify-1");
    expect(await job.getState()).toBe("failed");
    expect(job.failedReason).toBe("repository o/r does not exist");
    expect(handler).toHaveBeenCalledTimes(1);
    expect(
      await metricValue(h.metrics, "ratatoskr_job_failures_total", { queue: "notify", reason: "permanent" }),
    ).toBe(1);
  });

  it("completes a skipped job and counts it as skipped", async () => {
    h.startWorker("postmortem", async () => skipped("task 4 already explained"));
    await h.queues.enqueue(jobRequest("postmortem", { v: 1, taskId: 4, cause: "failed" }, "4-postmortem-1"));

    const job = await finished("postmortem", "4-postmortem-1");
    expect(await job.getState()).toBe("completed");
    expect(job.returnvalue).toEqual({ status: "skipped", reason: "task 4 already explained" });
    expect(
      await metricValue(h.metrics, "ratatoskr_jobs_processed_total", {
        queue: "postmortem",
        outcome: "skipped",
      }),
    ).toBe(1);
  });

  it("hands the handler parsed data and a logger carrying queue, job and task ids", async () => {
    h.startWorker("dev", async (data, { logger, signal }) => {
      logger.info({ round: data.round, aborted: signal.aborted }, "working");
    });
    await h.queues.enqueue(jobRequest("dev", { v: 1, taskId: 12, kind: "revise", round: 2 }, "12-run-dev-4"));
    await finished("dev", "12-run-dev-4");
    expect(h.captured.lines()).toContainEqual(
      expect.objectContaining({
        msg: "working",
        queue: "dev",
        jobId: "12-run-dev-4",
        taskId: 12,
        round: 2,
        aborted: false,
      }),
    );
  });

  it("keeps secrets out of the failure reason stored in Redis and out of the logs", async () => {
    h.startWorker("notify", async () => {
      throw new PermanentError(
        "POST https://api.telegram.org/bot123456789:AAHsecretsecretsecretsecretsecret12/sendMessage: 400",
      );
    });
    await h.queues.enqueue(jobRequest("notify", { v: 1, kind: "message", notificationId: 1 }, "1-notify-1"));
    const job = await finished("notify", "1-notify-1");
    expect(job.failedReason).toBe("POST https://api.telegram.org/bot[REDACTED]/sendMessage: 400");
    expect(JSON.stringify(job.stacktrace)).not.toContain("AAHsecret");
    expect(h.captured.text()).toContain("job failed permanently");
    expect(h.captured.text()).not.toContain("AAHsecret");
  });
});

describe("runWorkers", () => {
  it("refuses to start when a consumed queue has no handler", () => {
    expect(() => assertHandlers(["dev", "review", "nope"], { dev: async () => undefined })).toThrow(
      "cannot start workers: unknown queues: nope; no handler for: review, nope",
    );
    const handlers = { dev: async () => undefined } as unknown as JobHandlerMap<"dev" | "review">;
    expect(() =>
      runWorkers({
        queues: ["dev", "review"],
        handlers,
        connection: h.workerConnection,
        prefix: h.prefix,
        concurrency: 1,
        logger: h.logger,
        metrics: h.metrics,
      }),
    ).toThrow(/no handler for: review/);
  });

  it("types the handler map so a missing handler does not compile", () => {
    const common = { connection: h.workerConnection, prefix: h.prefix, logger: h.logger, metrics: h.metrics };
    const check = () =>
      runWorkers({
        ...common,
        queues: ["dev", "review"],
        // @ts-expect-error -- `review` has no handler
        handlers: { dev: async () => undefined },
        concurrency: 1,
      });
    expect(check).toThrow(/no handler for: review/);
  });

  it("starts one worker per consumed queue", async () => {
    const seen: string[] = [];
    const handles = runWorkers({
      queues: ["dev", "review"],
      handlers: {
        dev: async (data) => void seen.push(`dev ${data.kind}`),
        review: async (data) => void seen.push(`review ${data.kind}`),
      },
      connection: h.workerConnection,
      prefix: h.prefix,
      concurrency: { dev: 2 },
      logger: h.logger,
      metrics: h.metrics,
    });
    try {
      expect(handles.map((x) => [x.queue, x.worker.concurrency])).toEqual([
        ["dev", 2],
        ["review", 1],
      ]);
      await h.queues.enqueue(jobRequest("dev", { v: 1, taskId: 1, kind: "fix", round: 1 }, "1-run-dev-1"));
      await h.queues.enqueue(jobRequest("review", { v: 1, taskId: 1, kind: "plan", round: 1 }, "1-review-1"));
      await waitFor(() => seen.length === 2, { what: "both handlers to run" });
      expect(seen.sort()).toEqual(["dev fix", "review plan"]);
    } finally {
      await Promise.all(handles.map((x) => x.close(1_000)));
    }
  });
});
