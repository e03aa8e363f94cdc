import { describe, expect, it } from "vitest";
import {
  describeTopology,
  loadConfig,
  queueConfig,
  redisSettingsProblems,
  redisTopology,
} from "../src/index.ts";

describe("Redis topology from the settings", () => {
  it("keeps a bare URL a single Redis", () => {
    expect(redisTopology("redis://:pw@cache:6380/2")).toEqual({
      kind: "standalone",
      url: "redis://:pw@cache:6380/2",
    });
    expect(describeTopology("redis://:pw@cache:6380/2")).toBe("cache:6380");
  });

  it("seeds a cluster with REDIS_URL's host and the listed nodes, credentials and TLS from the URL", () => {
    const topology = redisTopology({
      url: "rediss://app:s3cret@a.redis:7000",
      clusterNodes: ["b.redis:7000", "a.redis:7000", "c.redis"],
    });
    expect(topology).toMatchObject({
      kind: "cluster",
      nodes: [
        { host: "a.redis", port: 7000 },
        { host: "b.redis", port: 7000 },
        { host: "c.redis", port: 6379 },
      ],
      redisOptions: { username: "app", password: "s3cret", tls: {} },
    });
    expect(describeTopology({ url: "redis://:s3cret@a:1", clusterNodes: ["b:2"] })).toBe("cluster a:1,b:2");
  });

  it("finds the master through sentinels with the URL's password and database", () => {
    const topology = redisTopology({
      url: "redis://:master-pw@ignored/3",
      sentinels: ["s1:26379", "s2"],
      sentinelName: "queues",
      sentinelPassword: "sentinel-pw",
    });
    expect(topology).toEqual({
      kind: "sentinel",
      options: {
        password: "master-pw",
        db: 3,
        sentinels: [
          { host: "s1", port: 26379 },
          { host: "s2", port: 26379 },
        ],
        name: "queues",
        sentinelPassword: "sentinel-pw",
      },
    });
  });

  it("names each broken rule: no hash tag on a cluster, both modes at once, a malformed address", () => {
    const problems = redisSettingsProblems(
      { url: "redis://a", clusterNodes: ["b:notaport"], sentinels: ["s1"] },
      "ratatoskr",
    );
    expect(problems.map((p) => `${p.name} ${p.message}`)).toEqual([
      "REDIS_SENTINELS cannot be combined with REDIS_CLUSTER_NODES; set one of them",
      "REDIS_CLUSTER_NODES must list host:port addresses, not b:notaport",
      "QUEUE_PREFIX must be hash-tagged on a Redis Cluster (REDIS_CLUSTER_NODES is set), e.g. {ratatoskr}",
    ]);
    expect(redisSettingsProblems({ url: "redis://a", clusterNodes: ["b:1"] }, "{ratatoskr}")).toEqual([]);
  });
});

describe("QUEUE_PREFIX", () => {
  const prefixOf = (value: string) => loadConfig(queueConfig, { QUEUE_PREFIX: value }).queue.prefix;

  it("accepts a plain name and a hash-tagged one, refuses a half tag or a colon", () => {
    expect(prefixOf("ratatoskr")).toBe("ratatoskr");
    expect(prefixOf("{ratatoskr}")).toBe("{ratatoskr}");
    for (const bad of ["{ratatoskr", "{a}b", "has:colon", "{}"])
      expect(() => prefixOf(bad)).toThrow(/QUEUE_PREFIX must be text matching/);
  });
});
