import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject, describe, expect, it } from "vitest";
import pg from "pg";
import { deleteKeysWithPrefix, dropSchema } from "@ratatoskr/testkit/vitest";
import { bareGit } from "../src/demo/demo-git.ts";
import { entries, opencodeProcesses, processesUnder, startDemoProcess } from "./support/demo-process.ts";

const HEADER = /real opencode http:\/\/127\.0\.0\.1:(\d+)[\s\S]*schema (\S+), queue prefix (\S+), temporary directory/;
const STOPPED = "Demo stopped; its temporary directories, schema and queues are removed.";

async function schemaExists(databaseUrl: string, schema: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM information_schema.schemata WHERE schema_name = $1", [schema]);
    return (found.rowCount ?? 0) > 0;
  } finally {
    await client.end();
  }
}

/** What a person reads: each step with its time, in order, as plain text (no JSON logs, no markers). */
function expectTranscript(transcript: string): void {
  expect(transcript).toMatch(/\[\+\s*\d+\.\d s\] 👤 alice opened issue #1: Add a \/health endpoint/);
  expect(transcript).not.toContain("\u001b[");
  expect(transcript).not.toContain('{"level"');
  expect(transcript).not.toContain("<!--");
  expect(transcript).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
  expect(transcript).not.toMatch(/❌ failed|🚫 rejected|unavailable/);
  // The plan is asked for, run, reviewed and posted; then implement goes through two dev rounds
  // (the reviewer's one change between them) to its PR "Closes #1".
  const steps = [
    "👤 alice commented: /agent plan",
    "Status: ▶️ running",
    "Status: ✅ done",
    "👤 alice commented: /agent implement",
    "round 1 of 3",
    "round 2 of 3",
    "🔀 PR !2 opened: Add a /health endpoint (agent/issue-1-2 → main)",
    "Closes #1",
    'Command #2 is "success"',
  ];
  const at: number[] = [];
  for (const step of steps) at.push(transcript.indexOf(step, Math.max(0, ...at)));
  expect(at.every((i) => i >= 0), `${at.join(",")}\n${transcript}`).toBe(true);
  // The reviewed plan is posted before implement is asked for (its order with the "done" edit may vary).
  const posted = transcript.indexOf("### Plan (`/agent plan` by @alice, command #1, reviewed in 1 round)");
  expect(posted).toBeGreaterThan(0);
  expect(posted).toBeLessThan(transcript.indexOf("👤 alice commented: /agent implement"));
}

describe("`pnpm demo gitea` as a process", () => {
  it("plays an issue from /agent plan to a reviewed PR, printing each status comment edit; one Ctrl-C stops it leaving nothing behind", async () => {
    const env = { REDIS_URL: inject("redisUrl"), DATABASE_URL: inject("databaseUrl") };
    const tmp = await mkdtemp(join(tmpdir(), "demo-gitea-process-"));
    const demo = startDemoProcess({ ...env, TMPDIR: tmp }, ["gitea"]);
    let schema = "";
    let prefix = "";
    try {
      const [, opencodePort, s, p] = await demo.waitFor(HEADER, 120_000);
      [schema, prefix] = [s!, p!];
      const [, bare, branch] = await demo.waitFor(/git --git-dir (\S+) log -p main\.\.(\S+)\n[\s\S]*press Ctrl\+C to stop/, 240_000);
      expectTranscript(demo.output());
      expect(branch).toMatch(/^agent\/issue-1-2$/);
      expect(await bareGit(bare!, ["show", `refs/heads/${branch}:server.js`])).toContain('JSON.stringify({ status: "ok" })');

      demo.child.kill("SIGINT");
      const [code, signal] = await demo.exited;
      expect({ code, signal }, demo.output()).toEqual({ code: 0, signal: null });
      expect(demo.output().trimEnd().split("\n").at(-1)).toBe(STOPPED);
      expect(entries(tmp), "the run's temporary directories").toEqual([]);
      expect(processesUnder(tmp)).toEqual([]);
      expect(opencodeProcesses(opencodePort!)).toEqual([]);
      expect(await schemaExists(env.DATABASE_URL, schema)).toBe(false);
    } finally {
      demo.child.kill("SIGKILL");
      await rm(tmp, { recursive: true, force: true });
      if (schema) await dropSchema(env.DATABASE_URL, schema);
      if (prefix) await deleteKeysWithPrefix(env.REDIS_URL, prefix);
    }
  }, 420_000);

  it("names the demos it has when asked for another, and starts nothing", async () => {
    const demo = startDemoProcess({ REDIS_URL: inject("redisUrl"), DATABASE_URL: inject("databaseUrl") }, ["gitlab"]);
    const [code] = await demo.exited;
    expect(code).toBe(2);
    expect(demo.output().trim()).toBe('unknown demo "gitlab": `pnpm demo` plays the Telegram door, `pnpm demo gitea` the Gitea door');
  }, 60_000);
});
