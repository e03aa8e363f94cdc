import { Cluster, Redis, type RedisOptions } from "ioredis";
import type { Logger } from "pino";
import { createOutageLog } from "../logging/outage-log.ts";
import { scrubSecrets } from "../logging/secret-scrubber.ts";
import { redisTopology, type RedisSettings } from "./redis-topology.ts";

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

/**
 * One connection for a role, to a single Redis, a Redis Cluster or a Sentinel-watched master as
 * the settings say (a bare URL means a single Redis).
 *
 * A Cluster is returned under the `Redis` type: it answers the same commands, BullMQ takes either,
 * and every key the services write starts with QUEUE_PREFIX, whose hash tag keeps them in one slot.
 */
export function createRedisConnection(
  settings: RedisSettings | string,
  role: RedisRole,
  opts: RedisConnectionOptions,
): Redis {
  const topology = redisTopology(settings);
  const own: RedisOptions = {
    ...opts.redisOptions,
    ...(opts.connectionName ? { connectionName: opts.connectionName } : {}),
    ...ROLE_OPTIONS[role],
  };
  let connection: Redis;
  if (topology.kind === "cluster") {
    const cluster = new Cluster(topology.nodes, {
      ...topology.clusterOptions,
      redisOptions: { ...topology.redisOptions, ...own },
      // The role's offline-queue choice applies to the cluster as a whole, too.
      enableOfflineQueue: own.enableOfflineQueue ?? true,
    });
    connection = cluster as unknown as Redis;
  } else if (topology.kind === "sentinel") {
    connection = new Redis({ ...topology.options, ...own });
  } else {
    connection = new Redis(topology.url, own);
  }
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
