import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { serviceEntryArgs } from "@ratatoskr/testkit";
import { createTestRedis, dropSchema, testSchemaName, type TestRedis } from "@ratatoskr/testkit/vitest";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";

/**
 * A service started with a mistake stops before connecting anywhere it should not, prints one
 * readable message (every problem, each once, no stack trace) and exits non-zero.
 */
const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const NO_STACK = /^\s+at /m;

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runService(name: string, env: Record<string, string>): Promise<Exit> {
  const child = spawn(
    process.execPath,
    serviceEntryArgs(name),
    {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? "",
        HTTP_HOST: "127.0.0.1",
        HTTP_PORT: "0",
        LOG_LEVEL: "warn",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

describe("service start-up with a mistake", () => {
  const databaseUrl = inject("databaseUrl");
  const emptySchema = testSchemaName();
  let redis: TestRedis;
  let good: Record<string, string>;

  beforeAll(async () => {
    redis = createTestRedis();
    // A schema that exists but has no migrations: what a forgotten `pnpm db:migrate` leaves.
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(`CREATE SCHEMA "${emptySchema}"`);
    await client.end();
    good = {
      REDIS_URL: redis.url,
      QUEUE_PREFIX: redis.prefix,
      DATABASE_URL: databaseUrl,
      DATABASE_SCHEMA: emptySchema,
    };
  });
  afterAll(async () => {
    await redis.cleanup();
    await dropSchema(databaseUrl, emptySchema);
  });

  it("lists every invalid variable of the service at once, before connecting anywhere", async () => {
    const result = await runService("ingress", {
      DATABASE_URL: "mysql://db.example:3306/x",
      QUEUE_PREFIX: "has:colon",
      HTTP_PORT: "eighty",
      TELEGRAM_BOT_TOKEN: "123:token",
      TELEGRAM_ALLOWED_CHAT_IDS: "not-a-number",
      GITEA_URL: "https://gitea.example",
      GITEA_WEBHOOK_SECRET: "webhook-secret",
      BULL_BOARD_USER: "admin",
    });
    expect(result.code, result.stderr).toBe(1);
    const problems = result.stderr.split("\n").filter((line) => line.startsWith("  - "));
    const named = problems.map((line) => line.slice(4).split(" ")[0]);
    expect(named).toEqual(expect.arrayContaining(["REDIS_URL", "DATABASE_URL", "QUEUE_PREFIX", "HTTP_PORT"]));
    expect(named).toEqual(
      expect.arrayContaining(["TELEGRAM_ALLOWED_CHAT_IDS", "GITEA_TOKEN", "BULL_BOARD_PASSWORD"]),
    );
    expect(new Set(problems).size, "each problem once").toBe(problems.length);
    expect(result.stderr).toMatch(/^ingress cannot start\. Invalid configuration \(\d+ problems\):/);
    expect(result.stderr).not.toMatch(NO_STACK);
    expect(result.stdout, "nothing was logged: nothing was started").toBe("");
  }, 30_000);

  it("names Redis and its address when REDIS_URL points nowhere", async () => {
    const result = await runService("notifier", {
      ...good,
      REDIS_URL: "redis://127.0.0.1:1",
      STARTUP_TIMEOUT_MS: "300",
    });
    expect(result.code, result.stderr).toBe(1);
    // The schema is not migrated either: both problems, in one message (issue 21.8).
    expect(result.stderr).toMatch(/^notifier cannot start: \n- Redis at 127\.0\.0\.1:1 is unreachable after \d+ ms \(.*ECONNREFUSED.*\)/);
    expect(result.stderr).toMatch(/\n- Postgres 127\.0\.0\.1:5432\/test \(schema "[^"]+"\) is not migrated/);
    expect(result.stderr.trim().split("\n")).toHaveLength(3);
    expect(result.stderr).not.toMatch(NO_STACK);
  }, 30_000);

  it("says the database is not migrated and how to fix it", async () => {
    const result = await runService("notifier", good);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr.trim()).toBe(
      `notifier cannot start: Postgres 127.0.0.1:5432/test (schema "${emptySchema}") is not migrated: it has no tables yet; run \`pnpm db:migrate\` (or the image's migrate job) against it`,
    );
  }, 30_000);

  it("says the database does not exist, or that Postgres does not answer", async () => {
    const missing = await runService("notifier", {
      ...good,
      DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/no_such_db_ops",
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /^notifier cannot start: Postgres database at 127\.0\.0\.1:5432\/no_such_db_ops does not exist; create it, then run `pnpm db:migrate`/,
    );
    const down = await runService("notifier", {
      ...good,
      DATABASE_URL: "postgresql://postgres@127.0.0.1:1/test",
      STARTUP_TIMEOUT_MS: "300",
    });
    expect(down.code).toBe(1);
    // Redis and Postgres are waited for side by side: on a loaded machine Redis may not have
    // answered within the 300 ms either, and is then named too.
    expect(down.stderr).toMatch(
      /^notifier cannot start: (\n- Redis at \S+ is unreachable after \d+ ms \(no answer\); start it or fix REDIS_URL\n- )?Postgres at 127\.0\.0\.1:1\/test is unreachable \(.*\); start it or fix DATABASE_URL\n$/,
    );
    for (const result of [missing, down]) expect(result.stderr).not.toMatch(NO_STACK);
  }, 30_000);
});
