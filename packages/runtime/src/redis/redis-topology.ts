import type { ClusterOptions, RedisOptions } from "ioredis";
import { ConfigError, type ConfigProblem } from "../config/config-loader.ts";

/**
 * Where Redis is, as the configuration says it:
 * - standalone: `REDIS_URL` alone;
 * - cluster: `REDIS_CLUSTER_NODES` seeds (plus REDIS_URL's host); REDIS_URL gives user, password, TLS;
 * - sentinel: `REDIS_SENTINELS` + `REDIS_SENTINEL_NAME`; REDIS_URL gives the master's user,
 *   password, TLS and database number (its host is not used).
 */
export interface RedisSettings {
  url: string;
  clusterNodes?: readonly string[] | undefined;
  sentinels?: readonly string[] | undefined;
  sentinelName?: string | undefined;
  sentinelPassword?: string | undefined;
}

export interface HostPort {
  host: string;
  port: number;
}

export type RedisTopology =
  | { kind: "standalone"; url: string }
  | { kind: "cluster"; nodes: HostPort[]; redisOptions: RedisOptions; clusterOptions: ClusterOptions }
  | { kind: "sentinel"; options: RedisOptions };

/** A BullMQ prefix that keeps every key of a queue in one Redis Cluster slot: `{name}`. */
export const HASH_TAGGED_PREFIX = /^\{[A-Za-z0-9_-]+\}$/;

/** `host:port` (port defaults to 6379, or 26379 for a sentinel); undefined when malformed. */
export function parseHostPort(raw: string, defaultPort = 6379): HostPort | undefined {
  const match = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.-]+)(?::(\d{1,5}))?$/.exec(raw.trim());
  if (!match) return undefined;
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  if (port < 1 || port > 65_535) return undefined;
  return { host: match[1]!.replace(/^\[|\]$/g, ""), port };
}

/** Cross-variable rules of the Redis settings, each broken one a ConfigProblem. */
export function redisSettingsProblems(settings: RedisSettings, queuePrefix: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const clustered = (settings.clusterNodes?.length ?? 0) > 0;
  const sentinel = (settings.sentinels?.length ?? 0) > 0;
  if (clustered && sentinel) {
    problems.push({
      name: "REDIS_SENTINELS",
      message: "cannot be combined with REDIS_CLUSTER_NODES; set one of them",
    });
  }
  for (const [name, list, port] of [
    ["REDIS_CLUSTER_NODES", settings.clusterNodes, 6379],
    ["REDIS_SENTINELS", settings.sentinels, 26379],
  ] as const) {
    const bad = (list ?? []).filter((item) => !parseHostPort(item, port));
    if (bad.length > 0)
      problems.push({ name, message: `must list host:port addresses, not ${bad.join(", ")}` });
  }
  if (clustered && !HASH_TAGGED_PREFIX.test(queuePrefix)) {
    problems.push({
      name: "QUEUE_PREFIX",
      message: `must be hash-tagged on a Redis Cluster (REDIS_CLUSTER_NODES is set), e.g. {${queuePrefix.replace(/[{}]/g, "") || "ratatoskr"}}`,
    });
  }
  return problems;
}

/** Throws a ConfigError listing every broken rule (for start-up's one message). */
export function checkRedisSettings(settings: RedisSettings, queuePrefix: string): void {
  const problems = redisSettingsProblems(settings, queuePrefix);
  if (problems.length > 0) throw new ConfigError(problems);
}

/** What REDIS_URL says about credentials, TLS and database, for cluster and sentinel modes. */
function urlOptions(url: string): RedisOptions {
  const parsed = new URL(url);
  const options: RedisOptions = {};
  if (parsed.username) options.username = decodeURIComponent(parsed.username);
  if (parsed.password) options.password = decodeURIComponent(parsed.password);
  if (parsed.protocol === "rediss:") options.tls = {};
  const db = parsed.pathname.replace(/^\//, "");
  if (db) options.db = Number(db);
  return options;
}

/** Pure: the settings turned into what ioredis needs (no connection is made). */
export function redisTopology(settings: RedisSettings | string): RedisTopology {
  const s: RedisSettings = typeof settings === "string" ? { url: settings } : settings;
  if (s.clusterNodes && s.clusterNodes.length > 0) {
    const fromUrl = new URL(s.url);
    const seeds = [`${fromUrl.hostname}:${fromUrl.port || "6379"}`, ...s.clusterNodes];
    const nodes = seeds.map((seed) => parseHostPort(seed)).filter((n): n is HostPort => n !== undefined);
    const unique = [...new Map(nodes.map((n) => [`${n.host}:${n.port}`, n])).values()];
    const { db: _db, ...redisOptions } = urlOptions(s.url);
    return { kind: "cluster", nodes: unique, redisOptions, clusterOptions: {} };
  }
  if (s.sentinels && s.sentinels.length > 0) {
    const sentinels = s.sentinels
      .map((item) => parseHostPort(item, 26379))
      .filter((n): n is HostPort => n !== undefined);
    return {
      kind: "sentinel",
      options: {
        ...urlOptions(s.url),
        sentinels,
        name: s.sentinelName ?? "mymaster",
        ...(s.sentinelPassword ? { sentinelPassword: s.sentinelPassword } : {}),
      },
    };
  }
  return { kind: "standalone", url: s.url };
}

/** Addresses for messages, without credentials: `host:port` or `cluster a:1,b:2`. */
export function describeTopology(settings: RedisSettings | string): string {
  const topology = redisTopology(settings);
  if (topology.kind === "cluster")
    return `cluster ${topology.nodes.map((n) => `${n.host}:${n.port}`).join(",")}`;
  if (topology.kind === "sentinel") {
    const sentinels = (topology.options.sentinels ?? []).map((n) => `${n.host}:${n.port}`).join(",");
    return `master "${topology.options.name}" via sentinels ${sentinels}`;
  }
  try {
    const parsed = new URL(topology.url);
    return `${parsed.hostname}:${parsed.port || "6379"}`;
  } catch {
    return "REDIS_URL";
  }
}
