import type { QueueName, TaskEvent } from "@ratatoskr/contracts";
import type {
  AppliedTransition,
  ApplyTransitionOptions,
  Database,
  FollowUpDispatcher,
  Repositories,
} from "@ratatoskr/db";
import type {
  BaseConfig,
  ConfigSchema,
  Env,
  JobHandlerMap,
  Logger,
  QueueSet,
  ReadinessCheck,
  Redis,
  ServiceMetrics,
  ShutdownRegistry,
} from "@ratatoskr/runtime";
import type { FastifyInstance } from "fastify";

export const SERVICE_NAMES = ["ingress", "analyst", "dev", "reviewer", "postmortem", "notifier"] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/** What the host builds once per process and hands to every service it runs. */
export interface ServiceContext {
  config: BaseConfig;
  env: NodeJS.ProcessEnv;
  /** Whether this process takes the named service's jobs (`<NAME>_CONCURRENCY=0`: routes only). */
  takesJobs(service: ServiceName): boolean;
  logger: Logger;
  db: Database;
  repos: Repositories;
  queues: QueueSet;
  /** Producer connection (fails fast while Redis is down). */
  redis: Redis;
  metrics: ServiceMetrics;
  dispatcher: FollowUpDispatcher;
  shutdown: ShutdownRegistry;
  /**
   * Applies a state-machine event in one transaction, then enqueues its follow-ups.
   * A lost enqueue is picked up by the reconciler.
   */
  transition(taskId: number, event: TaskEvent, options?: ApplyTransitionOptions): Promise<AppliedTransition>;
}

export interface ServiceInstance<Q extends QueueName> {
  handlers: JobHandlerMap<Q>;
  /** Extra readiness checks (e.g. opencode). Redis and Postgres are always checked. */
  checks?: Record<string, ReadinessCheck>;
  /** Routes on the process's HTTP server (registered before it listens). */
  routes?(app: FastifyInstance): Promise<void>;
  /** Starts intake other than queues (a Telegram poller); runs after the server listens. */
  start?(): Promise<void>;
  /** Stops that intake first on shutdown, before workers drain. */
  stop?(): Promise<void>;
}

/** One service: the queues it consumes and how to build its handlers from the context. */
export interface ServiceDefinition<Q extends QueueName = QueueName> {
  name: ServiceName;
  queues: readonly Q[];
  /**
   * The service's own environment variables. The host validates them together with the base
   * ones at start-up (one message naming every problem) and the README table lists them.
   */
  configSchema?: ConfigSchema;
  /**
   * Rules across variables (e.g. GITEA_TOKEN when GITEA_URL is set): runs the service's config
   * loaders, which throw ConfigError; checked with the schema before anything connects.
   */
  checkConfig?(env: Env): void;
  /** Parallel jobs per consumed queue unless `<NAME>_CONCURRENCY` says otherwise. */
  defaultConcurrency: number;
  create(ctx: ServiceContext): Promise<ServiceInstance<Q>>;
}

export function defineService<Q extends QueueName>(definition: ServiceDefinition<Q>): ServiceDefinition<Q> {
  return definition;
}

/** Any one service, whatever queues it consumes (what hosts and the all-in-one entry hold). */
export type AnyServiceDefinition = { [Q in QueueName]: ServiceDefinition<Q> }[QueueName];
