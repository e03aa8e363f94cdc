import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOB_CATALOG, JobPayloadError, QUEUE_NAMES, jobRequest, type JobRequest } from "@ratatoskr/contracts";
import {
  QueueUnavailableError,
  createQueues,
  createRedisConnection,
  type QueueSet,
  type Redis,
} from "../src/index.ts";
import { startTcpProxy } from "./support/tcp-proxy.ts";
import { captureLogger, deleteKeys, testRedisUrl, uniquePrefix } from "./support/test-env.ts";
import { waitFor } from "./support/wait-for.ts";

const prefix = uniquePrefix();
const { logger } = captureLogger();
let connection: Redis;
let queues: QueueSet;

beforeAll(() => {
  connection = createRedisConnection(testRedisUrl(), "producer", { logger });
  queues = createQueues({ connection, prefix, logger });
});

afterAll(async () => {
  await queues.close();
  connection.disconnect();
  await deleteKeys(testRedisUrl(), prefix);
});

describe("createQueues", () => {
  it("creates one queue per queue name with the catalog's retry policy and retention", () => {
    expect(Object.keys(queues.queues).sort()).toEqual([...QUEUE_NAMES].sort());
    for (const name of QUEUE_NAMES) {
      expect(queues.queues[name].defaultJobOptions).toMatchObject({
        attempts: JOB_CATALOG[name].attempts,
        backoff: { type: "exponential", delay: 5_000 },
        removeOnComplete: { age: 3_600, count: 1_000 },
        removeOnFail: { age: 2_592_000 },
      });
    }
  });

  it("adds a valid job under its deterministic id with the catalog's job name", async () => {
    await queues.enqueue(jobRequest("review", { v: 1, taskId: 11, kind: "diff", round: 1 }, "11-review-1"));
    const job = await queues.queues.review.getJob("11-review-1");
    expect(job?.name).toBe("review-diff");
    expect(job?.data).toEqual({ v: 1, taskId: 11, kind: "diff", round: 1 });
    expect(job?.opts.attempts).toBe(JOB_CATALOG.review.attempts);
  });

  it("treats a repeated enqueue of the same job id as a no-op", async () => {
    const request = jobRequest("dev", { v: 1, taskId: 42, kind: "implement", round: 1 }, "42-run-dev-1");
    await queues.enqueue(request);
    await queues.enqueue(request);
    await queues.enqueue({ ...request, data: { ...request.data, round: 2 } });
    expect(await queues.queues.dev.getJobCounts("waiting", "delayed", "active")).toEqual({
      waiting: 1,
      delayed: 0,
      active: 0,
    });
    expect((await queues.queues.dev.getJob("42-run-dev-1"))?.data.round).toBe(1);
  });

  it("adds many jobs in one call under their deterministic ids, a repeat a no-op, an invalid one none", async () => {
    const requests = [
      jobRequest("review", { v: 1, taskId: 61, kind: "diff", round: 1 }, "61-review-1"),
      jobRequest("review", { v: 1, taskId: 62, kind: "diff", round: 1 }, "62-review-1"),
      jobRequest("dev", { v: 1, taskId: 61, kind: "implement", round: 1 }, "61-run-dev-1"),
    ];
    await queues.enqueueBulk(requests);
    const waiting = await queues.queues.review.getJobCountByTypes("waiting");
    await queues.enqueueBulk(requests);
    expect(await queues.queues.review.getJobCountByTypes("waiting")).toBe(waiting);
    const review = await queues.queues.review.getJob("62-review-1");
    expect(review?.name).toBe("review-diff");
    expect(review?.data).toEqual({ v: 1, taskId: 62, kind: "diff", round: 1 });
    expect(review?.opts.attempts).toBe(JOB_CATALOG.review.attempts);
    expect((await queues.queues.dev.getJob("61-run-dev-1"))?.name).toBe(JOB_CATALOG.dev.jobName);

    const invalid = { queue: "review", jobId: "63-review-1", data: { v: 1, taskId: "x" } } as unknown as JobRequest<"review">;
    const valid = jobRequest("review", { v: 1, taskId: 64, kind: "diff", round: 1 }, "64-review-1");
    const err = await queues.enqueueBulk([valid, invalid]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobPayloadError);
    expect(await queues.queues.review.getJob("64-review-1")).toBeUndefined();
  });

  it("rejects a payload its consumer would reject, and adds nothing", async () => {
    const bad = {
      queue: "postmortem",
      data: { v: 1, taskId: -3, cause: "boom" },
      jobId: "x-postmortem-1",
    } as unknown as JobRequest;
    const err = await queues.enqueue(bad).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobPayloadError);
    expect((err as Error).message).toMatch(/taskId/);
    expect((err as Error).message).toMatch(/cause/);
    expect(await queues.queues.postmortem.getJobCountByTypes("waiting", "delayed")).toBe(0);
  });

  it("rejects job ids BullMQ would refuse before reaching Redis", async () => {
    const data = { v: 1, kind: "message", notificationId: 5 } as const;
    await expect(queues.enqueue({ queue: "notify", data, jobId: "5:notify" })).rejects.toThrow(/without ":"/);
    await expect(queues.enqueue({ queue: "notify", data, jobId: "5" })).rejects.toThrow(/non-numeric/);
  });

  it("fails at once with QueueUnavailableError when Redis goes away (callers answer 503)", async () => {
    const proxy = await startTcpProxy(testRedisUrl());
    const viaProxy = createRedisConnection(proxy.url, "producer", { logger });
    const proxied = createQueues({ connection: viaProxy, prefix, logger });
    try {
      await proxied.enqueue(jobRequest("notify", { v: 1, kind: "gitea-status", taskId: 3 }, "3-notify-1"));
      await proxy.cut();
      await waitFor(() => viaProxy.status !== "ready", { what: "the connection to drop" });

      const started = Date.now();
      const err = await proxied
        .enqueue(jobRequest("notify", { v: 1, kind: "gitea-status", taskId: 3 }, "3-notify-2"))
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(QueueUnavailableError);
      expect(Date.now() - started).toBeLessThan(500);
    } finally {
      viaProxy.disconnect();
      await proxied.close().catch(() => undefined);
    }
  });

  it("bounds an enqueue when Redis has never been reachable", async () => {
    const dead = createRedisConnection("redis://127.0.0.1:1", "producer", { logger });
    const deadQueues = createQueues({ connection: dead, prefix, logger, enqueueTimeoutMs: 200 });
    try {
      const err = await deadQueues
        .enqueue(jobRequest("notify", { v: 1, kind: "gitea-status", taskId: 4 }, "4-notify-1"))
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(QueueUnavailableError);
      expect((err as Error).message).toMatch(/timed out after 200 ms/);
    } finally {
      dead.disconnect();
    }
  });
});
