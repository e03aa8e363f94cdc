import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { FakeTelegram, freePort } from "@ratatoskr/testkit";
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

/** Prisma's query compiler (its wasm and the base64 source of it), loaded at the first Prisma query. */
const QUERY_COMPILER = "@prisma/client/runtime/query_compiler";

/** Prisma's runtime (the generated client imports it) and its pg adapter, loaded with the client at its first query. */
const PRISMA_CLIENT = ["@prisma/client", "@prisma/adapter-pg"];

/** undici's fetch (loaded by its index, never by its Agent or request API alone). */
const UNDICI_FETCH = "undici/lib/web/fetch";

/**
 * Node's own fetch (its bundled undici, web streams): pg builds a `Response` at import to learn
 * whether it runs on Cloudflare unless it is loaded through @ratatoskr/db's pgDriver (~5 MB RSS).
 */
const NODE_FETCH = "node:internal/deps/undici/undici";

/** ICU's number, plural and grapheme data (~5 MB of node's binary made resident): the notifier's formatters. */
const INTL_FORMATTERS = ["Intl.NumberFormat", "Intl.PluralRules", "Intl.Segmenter"];

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

  it("starts without undici's fetch, gitea-js, simple-git, the JSONC parser or fastify's schema compilers when Gitea is not configured", async () => {
    // The opencode clients need only undici's Agent and request API; its index loads the rest too
    // (2.8 MB more heap), which only the Gitea client (fetch) uses. git and the opencode config
    // parser are needed by jobs only; fastify's compilers (ajv, fast-json-stringify's) by a route
    // with a JSON schema.
    const compilers = ["ajv", "@fastify/ajv-compiler", "@fastify/fast-json-stringify-compiler"];
    const unused = [UNDICI_FETCH, "gitea-js", "simple-git", "jsonc-parser", ...compilers];
    expect(await probe({ BULL_BOARD_DISABLED: "true" }, unused)).toEqual({
      started: Object.fromEntries(unused.map((name) => [name, false])),
    });
  }, 120_000);

  it("loads Bull Board and its login guard's rate limiter on the first authenticated request to it, not at start", async () => {
    const env = { BULL_BOARD_PASSWORD: "board-secret", PROBE_FETCH: "/admin/queues/api/queues" };
    expect(await probe(env, ["@bull-board", "rate-limiter-flexible"])).toEqual({
      started: { "@bull-board": false, "rate-limiter-flexible": false },
      fetched: { status: 200, loaded: { "@bull-board": true, "rate-limiter-flexible": true } },
    });
  }, 120_000);

  it("idles through every periodic sweep and a readiness probe without loading Prisma", async () => {
    // Each sweep runs every 100 ms, so the idle second and a half holds several passes of each;
    // their idle queries go through the plain pg pool (the compiler costs ~10 MB of RSS, Prisma's
    // client modules ~8 MB more).
    const sweepEvery = "100";
    const env = {
      BULL_BOARD_DISABLED: "true",
      PROBE_IDLE_MS: "1500",
      // Readiness probes run while idle too (503 here: nothing answers for opencode).
      PROBE_FETCH: "/health/ready",
      RECONCILER_INTERVAL_MS: sweepEvery,
      ANALYST_SWEEP_INTERVAL_MS: sweepEvery,
      PIPELINE_SWEEP_INTERVAL_MS: sweepEvery,
      NOTIFIER_STALE_SWEEP_INTERVAL_MS: sweepEvery,
      NOTIFIER_LEFT_SENDING_SWEEP_MS: sweepEvery,
      // The Gitea front door's sweeps (running-command recovery, status refresh) too; start-up
      // does not call Gitea when the bot's login is given, and nothing listens at its URL.
      GITEA_URL: `http://127.0.0.1:${await freePort()}`,
      GITEA_TOKEN: "token",
      GITEA_WEBHOOK_SECRET: "secret",
      GITEA_BOT_LOGIN: "ratatoskr-bot",
    };
    const prisma = [QUERY_COMPILER, ...PRISMA_CLIENT];
    const unloaded = Object.fromEntries(prisma.map((name) => [name, false]));
    expect(await probe(env, prisma)).toEqual({
      started: unloaded,
      idled: unloaded,
      fetched: { status: expect.any(Number), loaded: unloaded },
    });
  }, 120_000);

  it("loads BullMQ for Redis only: not its PostgreSQL backend, Valkey GLIDE client or cron-parser (1.8 MB of heap)", async () => {
    const loaded = {
      "bullmq/dist/cjs/classes": true,
      "bullmq/dist/cjs/postgres": false,
      "bullmq/dist/cjs/classes/valkey-glide-client": false,
      "cron-parser": false,
      luxon: false,
    };
    expect(await probe({ BULL_BOARD_DISABLED: "true", PROBE_IDLE_MS: "1000" }, Object.keys(loaded))).toEqual({
      started: loaded,
      idled: loaded,
    });
  }, 120_000);

  it("talks to Telegram through telegraf's node-fetch without loading the URL parser node-fetch keeps for Nodes that have none (whatwg-url, tr46: 1.7 MB of heap)", async () => {
    const telegram = await new FakeTelegram().start();
    try {
      const env = {
        BULL_BOARD_DISABLED: "true",
        PROBE_IDLE_MS: "1000",
        TELEGRAM_BOT_TOKEN: telegram.token,
        TELEGRAM_API_ROOT: telegram.url,
        TELEGRAM_ALLOWED_CHAT_IDS: "1",
      };
      const loaded = { "node-fetch/lib": true, "whatwg-url": false, tr46: false };
      expect(await probe(env, Object.keys(loaded))).toEqual({ started: loaded, idled: loaded });
    } finally {
      await telegram.stop();
    }
  }, 120_000);

  it("idles without node's fetch or the notifier's Intl formatters (pg's Cloudflare probe, formatters made at load)", async () => {
    // The probe's own GET uses node's fetch, so only start-up and the idle second are asked about it.
    const unused = [NODE_FETCH, ...INTL_FORMATTERS];
    const unloaded = Object.fromEntries(unused.map((name) => [name, false]));
    expect(await probe({ BULL_BOARD_DISABLED: "true", PROBE_IDLE_MS: "1000" }, unused)).toEqual({
      started: unloaded,
      idled: unloaded,
    });
  }, 120_000);
});
