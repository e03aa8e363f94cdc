import type { ConfigOf } from "./config-loader.ts";
import { envDurationMs, envEnum, envInt, envList, envString, envUrl } from "./env-var.ts";
import { isProxyAddress } from "./proxy-address.ts";

/**
 * Pieces every service composes into its own schema, e.g.
 * `loadConfig({ ...baseConfigSchema, telegram: { token: envString("TELEGRAM_BOT_TOKEN", …) } })`.
 */
export const redisConfig = {
  redis: {
    url: envUrl("REDIS_URL", {
      protocols: ["redis", "rediss"],
      secret: true,
      description:
        "Redis holding BullMQ queues, locks and heartbeats; with REDIS_CLUSTER_NODES or REDIS_SENTINELS it gives the user, password and TLS (rediss://)",
    }),
    clusterNodes: envList("REDIS_CLUSTER_NODES", {
      optional: true,
      description:
        "Redis Cluster seed nodes as host:port,… (REDIS_URL's host is one more); set it to run on a Redis Cluster, which needs a hash-tagged QUEUE_PREFIX such as {ratatoskr}",
    }),
    sentinels: envList("REDIS_SENTINELS", {
      optional: true,
      description:
        "Redis Sentinel addresses as host:port,…; set it to find the master through Sentinel (REDIS_URL's host is then not used, its password and database are the master's)",
    }),
    sentinelName: envString("REDIS_SENTINEL_NAME", {
      default: "mymaster",
      description: "Name of the master the sentinels watch (with REDIS_SENTINELS)",
    }),
    sentinelPassword: envString("REDIS_SENTINEL_PASSWORD", {
      optional: true,
      secret: true,
      description: "Password of the sentinels themselves, if they require one (with REDIS_SENTINELS)",
    }),
  },
};

export const queueConfig = {
  queue: {
    prefix: envString("QUEUE_PREFIX", {
      default: "ratatoskr",
      pattern: /^(?:[A-Za-z0-9_-]+|\{[A-Za-z0-9_-]+\})$/,
      description:
        "BullMQ key prefix; every service sharing the queues must use the same one; hash-tagged ({ratatoskr}) on a Redis Cluster",
    }),
  },
};

export const databaseConfig = {
  database: {
    url: envUrl("DATABASE_URL", {
      protocols: ["postgres", "postgresql"],
      secret: true,
      description: "Postgres holding all durable state (Prisma)",
    }),
    schema: envString("DATABASE_SCHEMA", {
      optional: true,
      pattern: /^[a-z_][a-z0-9_]*$/,
      description: "Postgres schema to use instead of the URL's, to isolate tests or tenants",
    }),
  },
};

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ["auto", "json", "pretty"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export const logConfig = {
  log: {
    level: envEnum("LOG_LEVEL", LOG_LEVELS, {
      default: "info",
      description: "Minimum level written to stdout",
    }),
    format: envEnum("LOG_FORMAT", LOG_FORMATS, {
      default: "auto",
      description:
        "auto: readable coloured lines (pino-pretty) when stdout is a terminal, JSON lines otherwise",
    }),
  },
};

export const shutdownConfig = {
  shutdown: {
    timeoutMs: envDurationMs("SHUTDOWN_TIMEOUT_MS", {
      default: 30_000,
      description: "How long running jobs may finish on SIGTERM before they are handed back to the queue",
    }),
  },
};

export const httpConfig = {
  http: {
    host: envString("HTTP_HOST", { default: "0.0.0.0", description: "Address of the health/metrics server" }),
    port: envInt("HTTP_PORT", {
      default: 8080,
      min: 0,
      max: 65_535,
      description: "Port of the health/metrics server; 0 picks a free one",
    }),
    trustProxy: envList("TRUST_PROXY", {
      optional: true,
      each: { format: "addresses, CIDR ranges or loopback/linklocal/uniquelocal", test: isProxyAddress },
      description:
        "Reverse proxies whose X-Forwarded-For names the client (Bull Board's login lockout is per client); unset: X-Forwarded-For is ignored",
    }),
  },
};

export const serviceInfoConfig = {
  service: {
    version: envString("SERVICE_VERSION", {
      default: "dev",
      description: "Version reported by /health/live and in every log line",
    }),
  },
};

export const baseConfigSchema = {
  ...redisConfig,
  ...queueConfig,
  ...databaseConfig,
  ...logConfig,
  ...shutdownConfig,
  ...httpConfig,
  ...serviceInfoConfig,
};

export type BaseConfig = ConfigOf<typeof baseConfigSchema>;
