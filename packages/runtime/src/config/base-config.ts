import type { ConfigOf } from "./config-loader.ts";
import { envDurationMs, envEnum, envInt, envString, envUrl } from "./env-var.ts";

/**
 * Pieces every service composes into its own schema, e.g.
 * `loadConfig({ ...baseConfigSchema, telegram: { token: envString("TELEGRAM_BOT_TOKEN", …) } })`.
 */
export const redisConfig = {
  redis: {
    url: envUrl("REDIS_URL", {
      protocols: ["redis", "rediss"],
      secret: true,
      description: "Redis holding BullMQ queues, locks and heartbeats",
    }),
  },
};

export const queueConfig = {
  queue: {
    prefix: envString("QUEUE_PREFIX", {
      default: "ratatoskr",
      pattern: /^[A-Za-z0-9_-]+$/,
      description: "BullMQ key prefix; every service sharing the queues must use the same one",
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

export const logConfig = {
  log: {
    level: envEnum("LOG_LEVEL", LOG_LEVELS, {
      default: "info",
      description: "Minimum level written to stdout",
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
  },
};

export const serviceInfoConfig = {
  service: {
    version: envString("SERVICE_VERSION", {
      default: "dev",
      description: "Version reported by /status and logs",
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
