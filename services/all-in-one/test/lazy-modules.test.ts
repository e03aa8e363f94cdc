import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { freePort } from "@ratatoskr/testkit";
import {
  createTestDatabase,
  createTestRedis,
  serviceTestEnv,
  type TestDatabase,
  type TestRedis,
} from "@ratatoskr/testkit/vitest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const PROBE = fileURLToPath(new URL("./support/loaded-packages.ts", import.meta.url));

let database: TestDatabase;
let redis: TestRedis;

beforeAll(async () => {
  database = await createTestDatabase();
  redis = createTestRedis();
});

afterAll(async () => {
  await redis?.cleanup();
  await database?.drop();
});

/** Starts the all-in-one in its own process and says which of `packages` it loaded (see the probe). */
async function probe(extra: NodeJS.ProcessEnv, packages: string[]): Promise<unknown> {
  const env = serviceTestEnv(database, redis, {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    // Nothing listens there: start-up does not need opencode.
    OPENCODE_URL: `http://127.0.0.1:${await freePort()}`,
    ...extra,
  });
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--conditions=ratatoskr-source", "--import", "tsx", PROBE, ...packages],
    { cwd: REPO_ROOT, env, timeout: 90_000 },
  );
  return JSON.parse(stdout.trim().split("\n").at(-1)!);
}

describe("all-in-one loads a feature's heavy modules only when the feature is used", () => {
  it("never loads Bull Board when it is disabled", async () => {
    expect(await probe({ BULL_BOARD_DISABLED: "true" }, ["@bull-board"])).toEqual({
      started: { "@bull-board": false },
    });
  }, 120_000);

  it("loads Bull Board on the first authenticated request to it, not at start", async () => {
    const env = { BULL_BOARD_PASSWORD: "board-secret", PROBE_FETCH: "/admin/queues/api/queues" };
    expect(await probe(env, ["@bull-board"])).toEqual({
      started: { "@bull-board": false },
      fetched: { status: 200, loaded: { "@bull-board": true } },
    });
  }, 120_000);
});
