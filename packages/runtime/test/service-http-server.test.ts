import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { jobRequest } from "@ratatoskr/contracts";
import {
  createMetrics,
  createRedisConnection,
  createServiceHttpServer,
  readinessReportOf,
  redisCheck,
  type ReadinessCheck,
} from "../src/index.ts";
import { createWorkerHarness, type WorkerHarness } from "./support/worker-harness.ts";
import { waitFor } from "./support/wait-for.ts";

let h: WorkerHarness;
beforeEach(() => {
  h = createWorkerHarness();
});
afterEach(async () => {
  await h.cleanup();
});

function server(checks: Record<string, ReadinessCheck>, opts: { isDraining?: () => boolean } = {}) {
  return createServiceHttpServer({
    service: "dev",
    version: "1.2.3",
    checks,
    metrics: h.metrics,
    logger: h.logger,
    checkTimeoutMs: 200,
    ...opts,
  });
}

describe("service HTTP server", () => {
  it("answers /health/live without touching dependencies", async () => {
    const app = server({ redis: () => new Promise(() => {}) });
    const res = await app.inject({ method: "GET", url: "/health/live" });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: "ok", service: "dev", version: "1.2.3" });
  });

  it("still validates and serializes a route's JSON schemas, its compilers loaded when it is added", async () => {
    const app = server({});
    app.post(
      "/echo",
      {
        schema: {
          body: { type: "object", required: ["n"], properties: { n: { type: "integer" } } },
          response: { 200: { type: "object", properties: { n: { type: "integer" } } } },
        },
      },
      async (request) => ({ ...(request.body as object), secret: "not in the schema" }),
    );
    const bad = await app.inject({ method: "POST", url: "/echo", payload: { n: "one" } });
    expect(bad.statusCode).toBe(400);
    const good = await app.inject({ method: "POST", url: "/echo", payload: { n: 1 } });
    expect(good.json()).toEqual({ n: 1 });
  });

  it("is ready when every check passes", async () => {
    // A producer connection fails fast, so readiness is false until it has connected.
    await waitFor(() => h.producer.status === "ready", { what: "redis to connect" });
    const app = server({ redis: redisCheck(h.producer), postgres: async () => undefined });
    const res = await app.inject({ method: "GET", url: "/health/ready" });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: "ok", checks: { redis: "ok", postgres: "ok" } });
  });

  it("answers 503 naming the failed and the hung check, the reasons only to an authenticated caller", async () => {
    const dead = createRedisConnection("redis://:redis-pw@127.0.0.1:1", "producer", { logger: h.logger });
    try {
      const app = server({
        redis: redisCheck(dead),
        postgres: async () => {
          throw new Error("connect ECONNREFUSED postgresql://app:pg-pw@db:5432/x");
        },
        opencode: () => new Promise(() => {}),
      });
      const res = await app.inject({ method: "GET", url: "/health/ready" });
      expect(res.statusCode).toBe(503);
      // The open probe: statuses only, no host, no error text (issue 21.2).
      expect(res.json()).toEqual({
        status: "failed",
        checks: { redis: "failed", postgres: "failed", opencode: "failed" },
      });
      expect(res.body).not.toMatch(/ECONNREFUSED|db:5432|timed out/);
      // The reasons, scrubbed, for a caller that authenticated the operator (Bull Board's login).
      const { errors } = await readinessReportOf(app);
      expect(errors?.opencode).toBe("opencode check timed out after 200 ms");
      expect(errors?.postgres).toBe("connect ECONNREFUSED postgresql://[REDACTED]@db:5432/x");
      expect(JSON.stringify(errors)).not.toContain("pg-pw");
      expect(JSON.stringify(errors)).not.toContain("redis-pw");
      // And on the metrics side, a gauge per dependency.
      const metrics = await (await app.inject({ method: "GET", url: "/metrics" })).body;
      expect(metrics).toContain('ratatoskr_dependency_up{check="postgres",service="test"} 0');
    } finally {
      dead.disconnect();
    }
  });

  it("is not ready while draining", async () => {
    const app = server({ redis: redisCheck(h.producer) }, { isDraining: () => true });
    const res = await app.inject({ method: "GET", url: "/health/ready" });
    expect(res.statusCode).toBe(503);
  });

  it("exposes job counters, durations and queue depth on /metrics after a job", async () => {
    h.metrics.observeQueueDepth([h.queues.queues.dev, h.queues.queues.review]);
    h.startWorker("dev", async () => "ok");
    await h.queues.enqueue(
      jobRequest("dev", { v: 1, taskId: 2, kind: "implement", round: 1 }, "2-run-dev-1"),
    );
    await h.queues.enqueue(jobRequest("review", { v: 1, taskId: 2, kind: "diff", round: 1 }, "2-review-1"));
    await h.queues.queues.review.add("review", { v: 1, taskId: 3, kind: "diff", round: 1 }, { priority: 3 });
    await waitFor(async () => (await h.queues.queues.dev.getJobState("2-run-dev-1")) === "completed");

    const res = await server({}).inject({ method: "GET", url: "/metrics" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    const text = res.body;
    expect(text).toContain(
      'ratatoskr_jobs_processed_total{queue="dev",outcome="completed",service="test"} 1',
    );
    expect(text).toContain('ratatoskr_job_duration_seconds_count{service="test",queue="dev"} 1');
    expect(text).toContain('ratatoskr_queue_jobs{queue="review",state="waiting",service="test"} 1');
    expect(text).toContain('ratatoskr_queue_jobs{queue="dev",state="waiting",service="test"} 0');
    expect(text).toContain('ratatoskr_queue_jobs{queue="review",state="prioritized",service="test"} 1');
    // The autoscaling signal: waiting + active + prioritized, under this QUEUE_PREFIX.
    expect(text).toContain(
      `ratatoskr_queue_jobs_needing_worker{queue="review",prefix="${h.prefix}",service="test"} 2`,
    );
    expect(text).toContain(
      `ratatoskr_queue_jobs_needing_worker{queue="dev",prefix="${h.prefix}",service="test"} 0`,
    );
    expect(text).toContain("# TYPE ratatoskr_job_failures_total counter");
  });

  it("includes process metrics from a registry of its own", async () => {
    const metrics = createMetrics({ service: "notifier" });
    const text = await metrics.registry.metrics();
    expect(text).toContain('process_cpu_user_seconds_total{service="notifier"}');
    const { register } = await import("prom-client");
    expect(await register.getMetricsAsJSON()).toEqual([]);
  });
});
