import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import {
  makePostgresTemplate,
  serviceEntryArgs,
  startOwnPostgres,
  startOwnRedis,
  type OwnPostgres,
  type OwnRedis,
} from "@ratatoskr/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";

/**
 * A service started before Redis or Postgres answers waits for them, saying so once per attempt
 * with growing pauses, and starts once they are there (STARTUP_TIMEOUT_MS unset: no limit).
 * Both run on ports of the test's own, so they can be absent without touching the shared ones.
 */
const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

interface LogLine {
  msg?: string;
  attempt?: number;
  nextCheckInMs?: number;
  url?: string;
}

let redis: OwnRedis;
let postgres: OwnPostgres;
let removeTemplate: () => Promise<void>;
const children: ChildProcess[] = [];

beforeAll(async () => {
  const template = await makePostgresTemplate();
  removeTemplate = template.remove;
  [redis, postgres] = await Promise.all([startOwnRedis(), startOwnPostgres(template.dir)]);
}, 90_000);
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});
afterAll(async () => {
  await Promise.allSettled([redis?.stop(), postgres?.destroy()]);
  await removeTemplate?.();
});

function startNotifier() {
  const child = spawn(process.execPath, serviceEntryArgs("notifier"), {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HTTP_HOST: "127.0.0.1",
      HTTP_PORT: "0",
      LOG_LEVEL: "info",
      REDIS_URL: redis.url,
      DATABASE_URL: postgres.url,
      QUEUE_PREFIX: "startup-waits",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = () =>
    stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as LogLine);
  return { child, lines, stderr: () => stderr };
}

describe("start-up while a dependency is down", () => {
  it("waits for Redis with backoff, one line per attempt, then starts and is ready", async () => {
    await redis.kill();
    const notifier = startNotifier();
    const waits = await vi.waitFor(
      () => {
        const found = notifier.lines().filter((l) => l.msg === "waiting for redis");
        if (found.length < 3) throw new Error(`${found.length} waiting lines so far\n${notifier.stderr()}`);
        return found;
      },
      { timeout: 30_000, interval: 100 },
    );
    expect(waits.map((w) => w.attempt)).toEqual([1, 2, 3]);
    expect(waits.map((w) => w.nextCheckInMs)).toEqual([500, 1_000, 2_000]);
    expect(notifier.child.exitCode).toBeNull();

    await redis.start();
    const started = await vi.waitFor(
      () => {
        const line = notifier.lines().find((l) => l.msg === "started");
        if (!line?.url) throw new Error(`not started\n${notifier.stderr()}`);
        return line;
      },
      { timeout: 30_000, interval: 100 },
    );
    const ready = await fetch(`${started.url}/health/ready`);
    expect(await ready.json()).toMatchObject({ status: "ok", checks: { redis: "ok", postgres: "ok", workers: "ok" } });
  }, 60_000);

  it("waits for Postgres the same way", async () => {
    await postgres.stop();
    const notifier = startNotifier();
    const waits = await vi.waitFor(
      () => {
        const found = notifier.lines().filter((l) => l.msg === "waiting for postgres");
        if (found.length < 2) throw new Error(`${found.length} waiting lines so far\n${notifier.stderr()}`);
        return found;
      },
      { timeout: 30_000, interval: 100 },
    );
    expect(waits.map((w) => w.attempt)).toEqual([1, 2]);
    expect(notifier.child.exitCode).toBeNull();

    await postgres.start();
    await vi.waitFor(
      () => {
        if (!notifier.lines().some((l) => l.msg === "started")) throw new Error(`not started\n${notifier.stderr()}`);
      },
      { timeout: 30_000, interval: 100 },
    );
  }, 60_000);
});
