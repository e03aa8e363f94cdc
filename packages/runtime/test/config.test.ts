import { describe, expect, it } from "vitest";
import {
  ConfigError,
  baseConfigSchema,
  describeConfig,
  envBoolean,
  envDurationMs,
  envList,
  envString,
  envUsd,
  loadConfig,
  renderConfigTable,
} from "../src/index.ts";

const validEnv = {
  REDIS_URL: "redis://:redis-pass@127.0.0.1:6379",
  DATABASE_URL: "postgresql://app:db-pass@127.0.0.1:5432/ratatoskr",
};

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfig", () => {
  it("returns a nested config with defaults applied", () => {
    const config = loadConfig(baseConfigSchema, validEnv);
    expect(config).toEqual({
      redis: {
        url: validEnv.REDIS_URL,
        clusterNodes: undefined,
        sentinels: undefined,
        sentinelName: "mymaster",
        sentinelPassword: undefined,
      },
      queue: { prefix: "ratatoskr" },
      database: { url: validEnv.DATABASE_URL, schema: undefined },
      log: { level: "info", format: "auto" },
      shutdown: { timeoutMs: 30_000 },
      http: { host: "0.0.0.0", port: 8080, trustProxy: undefined },
      service: { version: "dev" },
    });
  });

  it("freezes the config at every level", () => {
    const config = loadConfig(baseConfigSchema, validEnv);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.shutdown)).toBe(true);
    expect(() => {
      (config.shutdown as { timeoutMs: number }).timeoutMs = 1;
    }).toThrow(TypeError);
  });

  it("names every missing or invalid variable in one message", () => {
    const err = configError(() =>
      loadConfig(baseConfigSchema, {
        DATABASE_URL: validEnv.DATABASE_URL,
        HTTP_PORT: "eighty",
        LOG_LEVEL: "loud",
        SHUTDOWN_TIMEOUT_MS: "-5",
        QUEUE_PREFIX: "has:colon",
      }),
    );
    expect(err.problems.map((p) => p.name).sort()).toEqual(
      ["HTTP_PORT", "LOG_LEVEL", "QUEUE_PREFIX", "REDIS_URL", "SHUTDOWN_TIMEOUT_MS"].sort(),
    );
    expect(err.message).toContain("5 problems");
    expect(err.message).toMatch(/REDIS_URL is required but not set/);
    expect(err.message).toMatch(/HTTP_PORT must be an integer 0\.\.65535 \(got "eighty"\)/);
    expect(err.message).toMatch(/LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/);
    expect(err.message).toMatch(/SHUTDOWN_TIMEOUT_MS must be an integer >= 0/);
  });

  it("never prints the value of a secret variable", () => {
    const err = configError(() =>
      loadConfig(
        {
          ...baseConfigSchema,
          bot: { token: envString("BOT_TOKEN", { secret: true, pattern: /^\d+:.+$/, description: "bot" }) },
        },
        {
          REDIS_URL: "http://user:hunter2@redis",
          DATABASE_URL: "mysql://app:s3cr3t-db@db/x",
          BOT_TOKEN: "tok-very-secret",
        },
      ),
    );
    expect(err.problems.map((p) => p.name)).toEqual(["REDIS_URL", "DATABASE_URL", "BOT_TOKEN"]);
    for (const secret of ["hunter2", "s3cr3t-db", "tok-very-secret", "user:", "mysql"]) {
      expect(err.message).not.toContain(secret);
    }
    expect(err.message).toContain("REDIS_URL must be a URL (redis:// or rediss://) (value hidden: secret)");
  });

  it("reads real booleans and rejects anything but true/false/1/0", () => {
    const schema = {
      feature: { enabled: envBoolean("FEATURE_ENABLED", { default: false, description: "x" }) },
    };
    expect(loadConfig(schema, {}).feature.enabled).toBe(false);
    expect(loadConfig(schema, { FEATURE_ENABLED: "true" }).feature.enabled).toBe(true);
    expect(loadConfig(schema, { FEATURE_ENABLED: "1" }).feature.enabled).toBe(true);
    expect(loadConfig(schema, { FEATURE_ENABLED: "0" }).feature.enabled).toBe(false);
    expect(loadConfig(schema, { FEATURE_ENABLED: "false" }).feature.enabled).toBe(false);
    expect(configError(() => loadConfig(schema, { FEATURE_ENABLED: "yes" })).message).toContain(
      'FEATURE_ENABLED must be true, false, 1 or 0 (got "yes")',
    );
  });

  it("reads durations with _ separators and lists", () => {
    const schema = {
      poll: { intervalMs: envDurationMs("POLL_INTERVAL_MS", { default: 1_000, description: "x" }) },
      chats: envList("ALLOWED_CHATS", { optional: true, description: "x" }),
    };
    expect(loadConfig(schema, { POLL_INTERVAL_MS: "30_000", ALLOWED_CHATS: " 1, 2 ,3" })).toEqual({
      poll: { intervalMs: 30_000 },
      chats: ["1", "2", "3"],
    });
    expect(loadConfig(schema, {}).chats).toBeUndefined();
    expect(configError(() => loadConfig(schema, { POLL_INTERVAL_MS: "1.5" })).problems[0]?.name).toBe(
      "POLL_INTERVAL_MS",
    );
  });

  it("takes as TRUST_PROXY only addresses, ranges and the names fastify knows, naming what it refuses", () => {
    const trusted = " 10.0.0.0/8, 192.168.1.7 ,fd00::/8, ::1, loopback";
    expect(loadConfig(baseConfigSchema, { ...validEnv, TRUST_PROXY: trusted }).http.trustProxy).toEqual([
      "10.0.0.0/8",
      "192.168.1.7",
      "fd00::/8",
      "::1",
      "loopback",
    ]);
    const err = configError(() =>
      loadConfig(baseConfigSchema, { ...validEnv, TRUST_PROXY: "true,10.0.0.0/33,proxy.internal,10.1.2.3" }),
    );
    expect(err.problems).toEqual([expect.objectContaining({ name: "TRUST_PROXY" })]);
    expect(err.message).toContain("not one: true, 10.0.0.0/33, proxy.internal");
  });

  it("treats an empty value as unset", () => {
    expect(loadConfig(baseConfigSchema, { ...validEnv, SHUTDOWN_TIMEOUT_MS: "" }).shutdown.timeoutMs).toBe(
      30_000,
    );
    expect(
      configError(() => loadConfig(baseConfigSchema, { ...validEnv, REDIS_URL: "  " })).problems,
    ).toEqual([expect.objectContaining({ name: "REDIS_URL" })]);
  });

  it("refuses a duration whose name does not carry its unit", () => {
    expect(() => envDurationMs("POLL_INTERVAL", { description: "x" })).toThrow(/_MS/);
  });

  it("reads dollar amounts, unset as none, and refuses negative or malformed ones", () => {
    const schema = { budget: envUsd("TASK_BUDGET_USD", { optional: true, description: "x" }) };
    expect(loadConfig(schema, {}).budget).toBeUndefined();
    expect(loadConfig(schema, { TASK_BUDGET_USD: "2.50" }).budget).toBe(2.5);
    expect(loadConfig(schema, { TASK_BUDGET_USD: "3" }).budget).toBe(3);
    for (const bad of ["-1", "1e3", "$2", "2,50", "abc"]) {
      expect(configError(() => loadConfig(schema, { TASK_BUDGET_USD: bad })).message).toContain(
        `TASK_BUDGET_USD must be US dollars`,
      );
    }
    expect(() => envUsd("TASK_BUDGET", { description: "x" })).toThrow(/_USD/);
  });
});

describe("describeConfig", () => {
  it("describes every base variable with its default and secrecy", () => {
    const vars = describeConfig(baseConfigSchema);
    expect(vars.map((v) => v.name)).toEqual([
      "REDIS_URL",
      "REDIS_CLUSTER_NODES",
      "REDIS_SENTINELS",
      "REDIS_SENTINEL_NAME",
      "REDIS_SENTINEL_PASSWORD",
      "QUEUE_PREFIX",
      "DATABASE_URL",
      "DATABASE_SCHEMA",
      "LOG_LEVEL",
      "LOG_FORMAT",
      "SHUTDOWN_TIMEOUT_MS",
      "HTTP_HOST",
      "HTTP_PORT",
      "TRUST_PROXY",
      "SERVICE_VERSION",
    ]);
    expect(vars.find((v) => v.name === "SHUTDOWN_TIMEOUT_MS")).toMatchObject({
      path: "shutdown.timeoutMs",
      defaultValue: "30000",
      required: false,
      secret: false,
    });
    expect(vars.find((v) => v.name === "REDIS_URL")).toMatchObject({ required: true, secret: true });
    expect(vars.find((v) => v.name === "DATABASE_SCHEMA")).toMatchObject({
      required: false,
      defaultValue: undefined,
    });
  });

  it("renders a markdown table row per variable", () => {
    const table = renderConfigTable(baseConfigSchema).split("\n");
    expect(table).toHaveLength(2 + 15);
    expect(table).toContain(
      "| `QUEUE_PREFIX` | `ratatoskr` | BullMQ key prefix; every service sharing the queues must use the same one; hash-tagged ({ratatoskr}) on a Redis Cluster (text matching /^(?:[A-Za-z0-9_-]+\\|\\{[A-Za-z0-9_-]+\\})$/) |",
    );
  });
});

describe("README", () => {
  /** Cells of a markdown table, ignoring the padding prettier adds. */
  const cells = (table: string) =>
    table
      .trim()
      .split("\n")
      .filter((row) => !/^\|[\s|-]+\|$/.test(row))
      .map((row) =>
        row
          .split(/(?<!\\)\|/)
          .slice(1, -1)
          .map((cell) => cell.trim()),
      );

  it("documents exactly the base configuration the code reads", async () => {
    const { readFile } = await import("node:fs/promises");
    const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
    const table = /<!-- config-table:start -->([\s\S]*?)<!-- config-table:end -->/.exec(readme)?.[1] ?? "";
    const expected = cells(renderConfigTable(baseConfigSchema));
    expect(expected).toHaveLength(16);
    expect(cells(table)).toEqual(expected);
  });
});

describe("renderConfigTable with shared variables", () => {
  it("documents a variable two services declare once, and refuses conflicting declarations", () => {
    const token = (def?: string) =>
      envString("SHARED_TOKEN", { description: "shared", optional: true, ...(def ? { default: def } : {}) });
    const same = renderConfigTable({ a: { token: token() }, b: { token: token() } });
    expect(same.match(/SHARED_TOKEN/g)).toHaveLength(1);
    expect(() => renderConfigTable({ a: { token: token() }, b: { token: token("x") } })).toThrow(
      /declared twice/,
    );
  });
});
