import { Redis, type RedisOptions } from "ioredis";
import type { Logger } from "pino";
import { createOutageLog } from "../logging/outage-log.ts";
import { scrubSecrets } from "../logging/secret-scrubber.ts";

export type { Redis } from "ioredis";

/**
 * - `worker`: BullMQ workers block on Redis and must survive reconnects, so a command waits
 *   for the connection instead of failing after N retries (`maxRetriesPerRequest: null`, which
 *   BullMQ requires for workers).
 * - `producer`: code enqueueing from an HTTP request or a bot update must fail fast while Redis
 *   is down (the caller answers 503 and the sender retries) instead of queueing commands in
 *   memory that a crash would lose (`enableOfflineQueue: false`).
 */
export type RedisRole = "worker" | "producer";

export interface RedisConnectionOptions {
  logger: Logger;
  /** Shown in `CLIENT LIST`, e.g. "dev-worker". */
  connectionName?: string;
  /** Extra ioredis options; the role's settings win over them. */
  redisOptions?: RedisOptions;
}

export const ROLE_OPTIONS: Readonly<Record<RedisRole, RedisOptions>> = {
  worker: { maxRetriesPerRequest: null },
  producer: { enableOfflineQueue: false },
};

export function createRedisConnection(url: string, role: RedisRole, opts: RedisConnectionOptions): Redis {
  const connection = new Redis(url, {
    ...opts.redisOptions,
    ...(opts.connectionName ? { connectionName: opts.connectionName } : {}),
    ...ROLE_OPTIONS[role],
  });
  const log = opts.logger.child({ component: "redis", role });
  // Without an `error` listener ioredis reports every failed reconnect as an unhandled error.
  // An outage is told in a few lines (down, still down every 30 s, back), not one per reconnect.
  const outage = createOutageLog({
    logger: log,
    what: "redis",
    describe: (err) => ({ name: (err as Error).name, message: scrubSecrets((err as Error).message) }),
  });
  connection.on("error", (err: Error) => outage.failed(err));
  connection.on("ready", () => outage.recovered());
  return connection;
}
