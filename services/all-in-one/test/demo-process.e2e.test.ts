import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import pg from "pg";
import { deleteKeysWithPrefix, dropSchema } from "@ratatoskr/testkit/vitest";
import {
  entries,
  eventually,
  opencodeProcesses,
  processesUnder,
  startDemoProcess,
  type DemoProcess,
} from "./support/demo-process.ts";

const DRAFT = /\[presses [^\]\n]*Approve[^\]\n]*\]/;
const HEADER =
  /health http:\/\/127\.0\.0\.1:(\d+)\/[\s\S]*real opencode http:\/\/127\.0\.0\.1:(\d+)[\s\S]*schema (\S+), queue prefix (\S+), temporary directory (\S+)\./;
const STACK_LINE = /^\s+at .+:\d+:\d+\)?$/m;
const STOPPED = "Demo stopped; its temporary directories, schema and queues are removed.";

interface Run {
  demo: DemoProcess;
  /** The run's own TMPDIR: every temporary directory it makes is in here. */
  tmp: string;
  healthPort: string;
  opencodePort: string;
  schema: string;
  prefix: string;
}

const dbEnv = () => ({ REDIS_URL: inject("redisUrl"), DATABASE_URL: inject("databaseUrl") });

async function startRun(): Promise<Run> {
  const tmp = await mkdtemp(join(tmpdir(), "demo-process-test-"));
  const demo = startDemoProcess({ ...dbEnv(), TMPDIR: tmp });
  const [, healthPort, opencodePort, schema, prefix] = await demo.waitFor(HEADER, 120_000);
  return {
    demo,
    tmp,
    healthPort: healthPort!,
    opencodePort: opencodePort!,
    schema: schema!,
    prefix: prefix!,
  };
}

async function schemaHasTask(databaseUrl: string, schema: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const tables = await client.query(
      "SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'tasks'",
      [schema],
    );
    if (tables.rowCount === 0) return false;
    return ((await client.query(`SELECT id FROM "${schema}".tasks WHERE id = 1`)).rowCount ?? 0) > 0;
  } finally {
    await client.end();
  }
}

/**
 * Whether the entry has taken over the stop signals: the process catches SIGHUP (bit 1 of SigCgt
 * in /proc/<pid>/status; the TypeScript loader the test runs under catches SIGINT itself).
 */
function catchesStopSignals(pid: number): boolean {
  try {
    const caught = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "0";
    return (BigInt(`0x${caught}`) & 1n) !== 0n;
  } catch {
    return false;
  }
}

async function keyCount(redisUrl: string, prefix: string): Promise<number> {
  const redis = new Redis(redisUrl);
  try {
    return (await redis.keys(`${prefix}:*`)).length;
  } finally {
    redis.disconnect();
  }
}

describe("the demo as a process (what `pnpm demo` runs)", () => {
  it("two at once keep their own data; a busy port is one line; one Ctrl-C stops it cleanly, leaving nothing; SIGKILL leaves no opencode nor temp dir and the next demo removes its data", async () => {
    const env = dbEnv();
    const runs: Run[] = [];
    try {
      const [a, b] = await Promise.all([startRun(), startRun()]).then(
        (started) => (runs.push(...started), started),
      );
      // Two demos at once: each its own schema and prefix, each plays its own task #1 to the draft.
      expect(a.schema).not.toBe(b.schema);
      expect(a.prefix).not.toBe(b.prefix);
      await Promise.all([a.demo.waitFor(DRAFT, 180_000), b.demo.waitFor(DRAFT, 180_000)]);
      expect(await schemaHasTask(env.DATABASE_URL, a.schema)).toBe(true);
      expect(await schemaHasTask(env.DATABASE_URL, b.schema)).toBe(true);
      for (const run of [a, b]) {
        // Not a terminal: no colour codes; service logs never appear as JSON or stack traces.
        expect(run.demo.output()).not.toContain("\u001b[");
        expect(run.demo.output()).not.toMatch(STACK_LINE);
        expect(run.demo.output()).not.toContain('{"level"');
      }

      // A third demo on a's health port: one readable line, exit 1, nothing started.
      const busy = startDemoProcess({ ...env, HTTP_PORT: a.healthPort });
      const [busyCode] = await busy.exited;
      expect(busyCode).toBe(1);
      expect(busy.output().trim().split("\n")).toEqual([
        expect.stringMatching(
          new RegExp(`port ${a.healthPort} on 127\\.0\\.0\\.1 is already in use.*HTTP_PORT`),
        ),
      ]);

      // One Ctrl-C stops a: exit 0, a last line saying so, nothing red, nothing left.
      // Twice at once, as under `pnpm demo`: pnpm forwards the terminal's Ctrl-C to node, which
      // also gets it from the terminal.
      a.demo.child.kill("SIGINT");
      a.demo.child.kill("SIGINT");
      const [code, signal] = await a.demo.exited;
      const output = a.demo.output();
      expect({ code, signal }, output).toEqual({ code: 0, signal: null });
      expect(output.trimEnd().split("\n").at(-1)).toBe(STOPPED);
      expect(output).not.toMatch(STACK_LINE);
      expect(output).not.toMatch(/ELIFECYCLE|Error:/);
      expect(output).not.toContain("\u001b["); // no colour at all in a pipe, red included
      expect(entries(a.tmp), "a's temporary directories").toEqual([]);
      expect(processesUnder(a.tmp)).toEqual([]);
      expect(opencodeProcesses(a.opencodePort)).toEqual([]);
      expect(await schemaHasTask(env.DATABASE_URL, a.schema)).toBe(false);
      expect(await keyCount(env.REDIS_URL, a.prefix)).toBe(0);
      // ... and b, still running, kept its data.
      expect(b.demo.child.exitCode).toBeNull();
      expect(await schemaHasTask(env.DATABASE_URL, b.schema)).toBe(true);
      expect(await keyCount(env.REDIS_URL, b.prefix)).toBeGreaterThan(0);

      // SIGKILL: no handler runs, yet b's opencode and its temporary directory are gone within
      // seconds (opencode's watchdog) ...
      expect(opencodeProcesses(b.opencodePort)).not.toEqual([]);
      b.demo.child.kill("SIGKILL");
      await b.demo.exited;
      const gone = () =>
        opencodeProcesses(b.opencodePort).length === 0 &&
        processesUnder(b.tmp).length === 0 &&
        entries(b.tmp).length === 0;
      expect(
        await eventually(gone, 10_000),
        `${opencodeProcesses(b.opencodePort).join("\n")}\n${entries(b.tmp)}`,
      ).toBe(true);
      // ... and the next demo removes its schema and queues (their run is gone); SIGTERM stops it.
      expect(await schemaHasTask(env.DATABASE_URL, b.schema)).toBe(true);
      const c = await startRun();
      runs.push(c);
      expect(c.demo.output()).toContain(b.schema);
      expect(await schemaHasTask(env.DATABASE_URL, b.schema)).toBe(false);
      expect(await keyCount(env.REDIS_URL, b.prefix)).toBe(0);
      c.demo.child.kill("SIGTERM");
      expect((await c.demo.exited)[0], c.demo.output()).toBe(0);
      expect(c.demo.output().trimEnd().split("\n").at(-1)).toBe(STOPPED);
      expect(entries(c.tmp)).toEqual([]);
    } finally {
      for (const run of runs) {
        run.demo.child.kill("SIGKILL");
        await rm(run.tmp, { recursive: true, force: true });
        await dropSchema(env.DATABASE_URL, run.schema);
        await deleteKeysWithPrefix(env.REDIS_URL, run.prefix);
      }
    }
  }, 400_000);

  it("a Ctrl-C while it is still starting stops what had started, removes it and exits 0", async () => {
    const tmp = await mkdtemp(join(tmpdir(), "demo-process-test-"));
    const demo = startDemoProcess({ ...dbEnv(), TMPDIR: tmp });
    try {
      // opencode is starting: its temp root exists, the demo has not printed its header yet.
      expect(
        await eventually(
          () =>
            entries(tmp).some((run) =>
              entries(join(tmp, run)).some((n) => n.startsWith("ratatoskr-opencode-")),
            ),
          60_000,
        ),
      ).toBe(true);
      expect(demo.output()).not.toContain("Ratatoskr demo");
      demo.child.kill("SIGINT");
      const [code] = await demo.exited;
      expect(code, demo.output()).toBe(0);
      expect(demo.output().trimEnd().split("\n").at(-1)).toBe(STOPPED);
      expect(demo.output()).not.toMatch(STACK_LINE);
      expect(entries(tmp)).toEqual([]);
      expect(processesUnder(tmp)).toEqual([]);
    } finally {
      demo.child.kill("SIGKILL");
      await rm(tmp, { recursive: true, force: true });
    }
  }, 120_000);

  it("SIGHUP after the terminal is gone (every write fails) still stops everything and removes it", async () => {
    const run = await startRun();
    const env = dbEnv();
    try {
      await run.demo.waitFor(DRAFT, 120_000);
      // The terminal closes: the demo's stdout and stderr lead nowhere, every write fails (EPIPE).
      run.demo.child.stdout!.destroy();
      run.demo.child.stderr!.destroy();
      run.demo.child.kill("SIGHUP");
      const [code, signal] = await run.demo.exited;
      expect([code, signal]).toEqual([0, null]);
      expect(await schemaHasTask(env.DATABASE_URL, run.schema)).toBe(false);
      expect(await keyCount(env.REDIS_URL, run.prefix)).toBe(0);
      expect(await eventually(() => opencodeProcesses(run.opencodePort).length === 0, 10_000)).toBe(true);
      expect(entries(run.tmp)).toEqual([]);
    } finally {
      run.demo.child.kill("SIGKILL");
      await rm(run.tmp, { recursive: true, force: true });
      await dropSchema(env.DATABASE_URL, run.schema);
      await deleteKeysWithPrefix(env.REDIS_URL, run.prefix);
    }
  }, 200_000);

  it("a Ctrl-C while its modules still load is one clean stop: exit 0, not Node's 130", async () => {
    const tmp = await mkdtemp(join(tmpdir(), "demo-process-test-"));
    const demo = startDemoProcess({ ...dbEnv(), TMPDIR: tmp });
    try {
      // The entry has taken over SIGINT (the kernel shows it caught), long before the demo's
      // modules are loaded and anything is printed.
      expect(await eventually(() => catchesStopSignals(demo.child.pid!), 30_000)).toBe(true);
      expect(demo.output()).toBe("");
      demo.child.kill("SIGINT");
      const [code, signal] = await demo.exited;
      expect([code, signal], demo.output()).toEqual([0, null]);
      expect(demo.output()).not.toMatch(STACK_LINE);
      expect(entries(tmp)).toEqual([]);
    } finally {
      demo.child.kill("SIGKILL");
      await rm(tmp, { recursive: true, force: true });
    }
  }, 120_000);
});
