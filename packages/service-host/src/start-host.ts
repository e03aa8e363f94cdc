import { hostname } from "node:os";
import type { QueueName } from "@ratatoskr/contracts";
import { createDatabase, createFollowUpDispatcher, createRepositories } from "@ratatoskr/db";
import {
  createLogger,
  createMetrics,
  createQueues,
  createRedisConnection,
  createServiceHttpServer,
  loadConfig,
  redisCheck,
  registerWorkers,
  runWorkers,
  ShutdownRegistry,
  startPeriodicTask,
  type JobHandler,
  type JobHandlerMap,
  type Logger,
  type ReadinessCheck,
  type WorkerHandle,
  workerCheck,
  checkRedisSettings,
  collectConfigProblems,
  ConfigError,
  StartupError,
  queueConfig,
  redisConfig,
} from "@ratatoskr/runtime";
import type { FastifyInstance } from "fastify";
import { fullConfigSchema, hostConfigSchema, type HostConfig } from "./host-config.ts";
import { startHeartbeat } from "./service-heartbeat.ts";
import { waitForBackends } from "./startup-checks.ts";
import type { AnyServiceDefinition, ServiceContext, ServiceInstance } from "./service-definition.ts";

export interface StartHostOptions {
  /** Name in logs and metrics: the service's own, or "all-in-one". */
  name: string;
  services: readonly AnyServiceDefinition[];
  env?: NodeJS.ProcessEnv;
  /** Install SIGTERM/SIGINT handlers (off in tests that run several hosts in one process). */
  handleSignals?: boolean;
  /** Called after a signal-triggered shutdown; defaults to process.exit. */
  exit?: (code: number) => void;
  /** Where log lines go instead of stdout (the demo shows each as one line of its transcript). */
  logDestination?: { write(line: string): void };
}

export interface RunningHost {
  context: ServiceContext;
  http: FastifyInstance;
  /** `http://host:port` the health server listens on. */
  url: string;
  shutdown(reason?: string): Promise<{ clean: boolean }>;
}

/**
 * The composition root shared by every service entry and the all-in-one entry: builds the
 * connections once, runs each service's workers and routes, and stops everything in order.
 */
export async function startHost(opts: StartHostOptions): Promise<RunningHost> {
  const env = opts.env ?? process.env;
  // Validate everything up front so a misconfigured service names every problem at once.
  const problems = collectConfigProblems([
    () => loadConfig(fullConfigSchema(opts.services), env),
    ...opts.services.map((service) => () => service.checkConfig?.(env)),
    () => {
      const { redis, queue } = loadConfig({ ...redisConfig, ...queueConfig }, env);
      checkRedisSettings(redis, queue.prefix);
    },
  ]);
  if (problems.length > 0) throw new ConfigError(problems);
  const config = loadConfig(hostConfigSchema(opts.services), env);
  const logger = createLogger({
    service: opts.name,
    level: config.log.level,
    format: config.log.format,
    version: config.service.version,
    ...(opts.logDestination ? { destination: opts.logDestination } : {}),
  });
  const shutdown = new ShutdownRegistry({ logger, ...(opts.exit ? { exit: opts.exit } : {}) });
  try {
    return await assemble(opts, env, config, logger, shutdown);
  } catch (err) {
    // Whatever was opened before the failure is closed, so a failed start leaves nothing behind;
    // quietly: the one message that says why is the entry's.
    await shutdown.shutdown("start-up failed", { quiet: true });
    throw err;
  }
}

async function assemble(
  opts: StartHostOptions,
  env: NodeJS.ProcessEnv,
  config: HostConfig,
  logger: Logger,
  shutdown: ShutdownRegistry,
): Promise<RunningHost> {
  const producer = createRedisConnection(config.redis, "producer", {
    logger,
    connectionName: `${opts.name}:producer`,
  });
  const workerRedis = createRedisConnection(config.redis, "worker", {
    logger,
    connectionName: `${opts.name}:worker`,
  });
  shutdown.register("connections", "redis", async () => {
    await Promise.allSettled([producer.quit(), workerRedis.quit()]);
  });
  // Producers do not queue commands while disconnected, so wait for the first connection here
  // rather than report "not ready" (or fail enqueues) in the first moments after start.
  const startupWait = { timeoutMs: config.startup.timeoutMs, logger: logger.child({ component: "startup" }) };
  const db = createDatabase({
    connectionString: config.database.url,
    ...(config.database.schema ? { schema: config.database.schema } : {}),
    // The error carries the whole pg client: its code and message say enough.
    onIdleError: (err) =>
      logger.warn(
        { code: (err as { code?: string }).code, reason: err.message },
        "an idle Postgres connection was closed; the next query connects anew",
      ),
  });
  shutdown.register("database", "prisma", () => db.close());
  // Both at once: a start with Redis and Postgres both wrong names both problems.
  const databaseCheck = await waitForBackends(
    { connection: producer, settings: config.redis },
    { db, connectionString: config.database.url },
    startupWait,
  );
  const queues = createQueues({ connection: producer, prefix: config.queue.prefix, logger });
  shutdown.register("queues", "queues", () => queues.close());

  const repos = createRepositories(db.prisma);
  const dispatcher = createFollowUpDispatcher({
    prisma: db.prisma,
    enqueue: async (request) => {
      await queues.enqueue(request);
    },
    enqueueBulk: (requests) => queues.enqueueBulk(requests),
    logger,
  });
  const metrics = createMetrics({ service: opts.name, logger });
  const parallelOf = (service: AnyServiceDefinition): number =>
    (config.concurrency as Record<string, number>)[service.name] ?? service.defaultConcurrency;
  const context: ServiceContext = {
    config,
    env,
    takesJobs: (name) => opts.services.some((service) => service.name === name && parallelOf(service) > 0),
    logger,
    db,
    repos,
    queues,
    redis: producer,
    metrics,
    dispatcher,
    shutdown,
    async transition(taskId, event, options) {
      const applied = await repos.applyTransition(taskId, event, options);
      await dispatcher.dispatch(applied.followUps);
      return applied;
    },
  };

  const instances: Array<[AnyServiceDefinition, ServiceInstance<QueueName>]> = [];
  for (const service of opts.services) {
    instances.push([service, (await service.create(context)) as ServiceInstance<QueueName>]);
  }

  let workers: WorkerHandle[] = [];
  const checks: Record<string, ReadinessCheck> = {
    redis: redisCheck(producer),
    postgres: databaseCheck,
    workers: workerCheck(workerRedis, () => workers.map((handle) => handle.worker)),
  };
  for (const [, instance] of instances) Object.assign(checks, instance.checks);
  const http = createServiceHttpServer({
    service: opts.name,
    version: config.service.version,
    checks,
    metrics,
    logger,
    isDraining: () => shutdown.isShuttingDown,
    ...(config.http.trustProxy ? { trustProxy: config.http.trustProxy } : {}),
  });
  for (const [, instance] of instances) await instance.routes?.(http);
  shutdown.register("telemetry", "http", () => http.close());

  const consumed: QueueName[] = [];
  const handlers: Partial<Record<QueueName, JobHandler<QueueName>>> = {};
  const concurrency: Partial<Record<QueueName, number>> = {};
  for (const [service, instance] of instances) {
    const parallel = parallelOf(service);
    // `<NAME>_CONCURRENCY=0`: this process serves the service's routes but takes none of its jobs.
    if (parallel === 0) continue;
    for (const queue of service.queues) {
      consumed.push(queue);
      handlers[queue] = instance.handlers[queue] as JobHandler<QueueName>;
      concurrency[queue] = parallel;
    }
  }
  metrics.observeQueueDepth(consumed.map((q) => queues.queues[q]));
  workers = runWorkers({
    queues: consumed,
    handlers: handlers as JobHandlerMap<QueueName>,
    concurrency,
    connection: workerRedis,
    prefix: config.queue.prefix,
    logger,
    metrics,
    lockDurationMs: config.jobs.lockMs,
    stalledIntervalMs: config.jobs.stalledCheckMs,
  });
  registerWorkers(shutdown, workers, config.shutdown.timeoutMs);

  const stopReconciler = startPeriodicTask({
    name: "follow-up-reconciler",
    intervalMs: config.reconciler.intervalMs,
    logger,
    run: async () => void (await dispatcher.reconcile({ olderThanMs: config.reconciler.olderThanMs })),
  });
  shutdown.register("intake", "reconciler", stopReconciler);
  for (const [service, instance] of instances) {
    if (instance.stop) shutdown.register("intake", service.name, instance.stop);
  }

  const url = await http.listen({ host: config.http.host, port: config.http.port }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== "EADDRINUSE") throw err;
    throw new StartupError(`port ${config.http.port} on ${config.http.host} is already in use; set HTTP_PORT to a free port`);
  });
  const startedAt = new Date().toISOString();
  for (const service of opts.services) {
    const beat = {
      name: service.name,
      version: config.service.version,
      pid: process.pid,
      host: hostname(),
      startedAt,
    };
    shutdown.register(
      "intake",
      `${service.name} heartbeat`,
      startHeartbeat(producer, config.queue.prefix, beat),
    );
  }
  for (const [, instance] of instances) await instance.start?.();
  if (opts.handleSignals !== false) {
    shutdown.installSignalHandlers();
    installProcessFaultHandlers(logger, shutdown, opts.exit ?? ((code) => process.exit(code)));
  }
  logger.info({ url, services: opts.services.map((s) => s.name), queues: consumed }, "started");

  return {
    context,
    http,
    url,
    shutdown: async (reason = "requested") => {
      const result = await shutdown.shutdown(reason);
      return { clean: result.clean };
    },
  };
}

/**
 * A rejection nobody handled or an exception nobody caught leaves the process in an unknown
 * state: log it with its stack, then shut down gracefully (jobs handed back, connections closed)
 * and exit 1 so the supervisor restarts a clean process — instead of Node's abrupt exit.
 */
export function installProcessFaultHandlers(
  logger: Logger,
  shutdown: ShutdownRegistry,
  exit: (code: number) => void,
  target: Pick<NodeJS.Process, "on"> = process,
): void {
  const fault = (kind: string) => (err: unknown) => {
    logger.fatal({ err }, `${kind}; shutting down`);
    if (shutdown.isShuttingDown) return;
    void shutdown.shutdown(kind).then(() => exit(1));
  };
  target.on("unhandledRejection", fault("unhandled promise rejection"));
  target.on("uncaughtException", fault("uncaught exception"));
}
