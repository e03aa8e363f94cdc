import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { ServiceMetrics } from "../metrics/service-metrics.ts";
import { runReadinessChecks, type ReadinessCheck } from "./readiness-checks.ts";

export interface ServiceHttpServerOptions {
  service: string;
  version?: string;
  /** e.g. `{ redis: redisCheck(connection), postgres: () => db.ping() }`. */
  checks: Readonly<Record<string, ReadinessCheck>>;
  metrics: ServiceMetrics;
  logger: Logger;
  /** Per-check bound; probes usually time out after 1–5 s (default 2_000). */
  checkTimeoutMs?: number;
  /** While true (e.g. shutting down), readiness answers 503 without running the checks. */
  isDraining?: () => boolean;
}

/**
 * Health and metrics server, built without listening (tests use `inject`, main.ts calls
 * `listen`). Services with their own HTTP app can register the same routes there instead.
 */
export function createServiceHttpServer(opts: ServiceHttpServerOptions): FastifyInstance {
  const loggerInstance: FastifyBaseLogger = opts.logger.child({ component: "http" });
  const app = Fastify({
    loggerInstance,
    // Probes and scrapes every few seconds would drown the log.
    logController: new LogController({ disableRequestLogging: true }),
  });
  const timeoutMs = opts.checkTimeoutMs ?? 2_000;

  app.get("/health/live", async () => ({ status: "ok", service: opts.service, version: opts.version }));

  app.get("/health/ready", async (_request, reply) => {
    if (opts.isDraining?.()) return reply.code(503).send({ status: "draining", checks: {} });
    const report = await runReadinessChecks(opts.checks, timeoutMs);
    if (report.status !== "ok") opts.logger.warn({ report }, "not ready");
    return reply.code(report.status === "ok" ? 200 : 503).send(report);
  });

  app.get("/metrics", async (_request, reply) => {
    const body = await opts.metrics.registry.metrics();
    return reply.type(opts.metrics.registry.contentType).send(body);
  });

  return app;
}
