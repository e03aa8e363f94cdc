import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { ServiceMetrics } from "../metrics/service-metrics.ts";
import { lazySchemaCompilers } from "./lazy-schema-compilers.ts";
import { runReadinessChecks, type ReadinessCheck, type ReadinessReport } from "./readiness-checks.ts";

const FULL_REPORT = Symbol("readiness report with reasons");
type WithReport = FastifyInstance & { [FULL_REPORT]?: () => Promise<ReadinessReport> };

/**
 * The readiness report with each failed check's reason, for callers that authenticated the
 * operator (ingress shows it behind Bull Board's login). `/health/ready` itself, which anyone
 * reaching the port may call, never carries the reasons: they name internal hosts and errors.
 */
export function readinessReportOf(app: FastifyInstance): Promise<ReadinessReport> {
  const report = (app as WithReport)[FULL_REPORT];
  if (!report) throw new Error("not a service HTTP server");
  return report();
}

/** How often a readiness that stays failed is logged again (every probe would drown the log). */
const NOT_READY_REMINDER_MS = 60_000;

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
  /** TRUST_PROXY: addresses or ranges whose X-Forwarded-For gives `request.ip`; none by default. */
  trustProxy?: readonly string[];
}

/**
 * Health and metrics server, built without listening (tests use `inject`, main.ts calls
 * `listen`). Services with their own HTTP app can register the same routes there instead.
 */
export function createServiceHttpServer(opts: ServiceHttpServerOptions): FastifyInstance {
  const loggerInstance: FastifyBaseLogger = opts.logger.child({ component: "http" });
  const app = Fastify({
    loggerInstance,
    trustProxy: opts.trustProxy?.length ? [...opts.trustProxy] : false,
    // Probes and scrapes every few seconds would drown the log.
    logController: new LogController({ disableRequestLogging: true }),
    schemaController: { compilersFactory: lazySchemaCompilers },
  });
  const timeoutMs = opts.checkTimeoutMs ?? 2_000;

  app.get("/health/live", async () => ({ status: "ok", service: opts.service, version: opts.version }));

  // One line when readiness fails (with the reasons), a reminder while it stays failed, one when it is back.
  let failingSince: number | undefined;
  let lastLoggedAt = 0;
  let lastFailed = "";
  const fullReport = async (): Promise<ReadinessReport> => {
    const report = await runReadinessChecks(opts.checks, timeoutMs);
    for (const [check, status] of Object.entries(report.checks))
      opts.metrics.dependencyUp.set({ check }, status === "ok" ? 1 : 0);
    const now = Date.now();
    if (report.status === "ok") {
      if (failingSince !== undefined) opts.logger.info({ downForMs: now - failingSince }, "ready again");
      failingSince = undefined;
      return report;
    }
    const failed = Object.keys(report.errors ?? {}).sort().join(",");
    if (failingSince === undefined || failed !== lastFailed || now - lastLoggedAt >= NOT_READY_REMINDER_MS) {
      opts.logger.warn(
        { report, ...(failingSince === undefined ? {} : { notReadyForMs: now - failingSince }) },
        failingSince === undefined ? "not ready" : "still not ready",
      );
      lastLoggedAt = now;
    }
    failingSince ??= now;
    lastFailed = failed;
    return report;
  };
  (app as WithReport)[FULL_REPORT] = fullReport;

  app.get("/health/ready", async (_request, reply) => {
    if (opts.isDraining?.()) return reply.code(503).send({ status: "draining", checks: {} });
    const { status, checks } = await fullReport();
    return reply.code(status === "ok" ? 200 : 503).send({ status, checks });
  });

  app.get("/metrics", async (_request, reply) => {
    const body = await opts.metrics.registry.metrics();
    return reply.type(opts.metrics.registry.contentType).send(body);
  });

  return app;
}
