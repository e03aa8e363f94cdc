import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { reply, startGitHttpServer, type GitHttpServer } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHATS, DEV, PipelineHarness, REVIEWER } from "./pipeline-harness.ts";

/**
 * The git host's token (issue 11, packages/git): it reaches git only through the environment.
 * A whole task runs against a smart-HTTP git host that demands it, and meanwhile every process's
 * argv is sampled; afterwards no log line, no argv and no `.git/config` holds it.
 */
const h = new PipelineHarness();
const TOKEN = `tok${randomBytes(16).toString("hex")}`;
let host: GitHttpServer;

beforeAll(async () => {
  await h.start(["ingress", "notifier"]);
  host = await startGitHttpServer({ root: h.remotes, auth: { username: "ratatoskr", password: TOKEN } });
  // Only the services that clone and push know the git host.
  const gitHost = { GITEA_URL: host.url, GITEA_TOKEN: TOKEN, GITEA_GIT_USER: "ratatoskr", LOCAL_GIT_ROOT: "" };
  const [dev, reviewer] = await Promise.all([h.startService("dev", gitHost), h.startService("reviewer", gitHost)]);
  h.running.set("dev", dev).set("reviewer", reviewer);
}, 240_000);

afterAll(async () => {
  await host?.close();
  await h.stop();
});

/**
 * Reads every process's argv in a tight loop until stopped: what `ps` would have shown. A process
 * of its own (synchronous reads, a pass every few ms) so short git commands are caught; it gets
 * the token through its environment, never its own argv.
 */
const SAMPLER = `
const { readdirSync, readFileSync } = require("node:fs");
const token = process.env.SAMPLE_TOKEN;
const seen = { samples: 0, gitProcesses: 0, leaks: [] };
let stopped = false;
process.stdin.on("end", () => { stopped = true; });
process.stdin.resume();
function pass() {
  for (const pid of readdirSync("/proc")) {
    if (!/^\\d+$/.test(pid) || Number(pid) === process.pid) continue;
    let argv = "";
    try { argv = readFileSync("/proc/" + pid + "/cmdline", "utf8"); } catch { continue; }
    if (argv.includes(token)) seen.leaks.push(argv.replaceAll("\\0", " "));
    // git itself, or the helper it runs to talk HTTP (which gets the remote's URL in argv).
    if (/(^|\\/)git(-remote-https?)?\\0/.test(argv) && /\\0(clone|fetch|push|ls-remote|origin)\\0/.test(argv)) seen.gitProcesses++;
  }
  seen.samples++;
  if (stopped) process.stdout.write(JSON.stringify(seen), () => process.exit(0));
  else setImmediate(pass);
}
pass();
`;

function sampleArgv() {
  const child = spawn(process.execPath, ["-e", SAMPLER], { env: { SAMPLE_TOKEN: TOKEN }, stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const exited = once(child, "exit");
  return {
    stop: async (): Promise<{ samples: number; gitProcesses: number; leaks: string[] }> => {
      child.stdin.end();
      await exited;
      return JSON.parse(out) as { samples: number; gitProcesses: number; leaks: string[] };
    },
  };
}

async function gitConfigs(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name === "config" && entry.parentPath.endsWith(".git")) found.push(join(entry.parentPath, entry.name));
  }
  return found;
}

describe("git credentials", () => {
  it("never appear in a log line, a process's argv or .git/config while a task is cloned, pushed and reviewed", async () => {
    const chat = CHATS[0]!;
    await h.repo("acme/secret");
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "Keep the token secret" },
      reply: [reply.write("acme/secret/note.txt", "no secrets here\n"), reply.json({ summary: "note added", done: true })],
    });
    h.model.addRule({
      match: { systemIncludes: REVIEWER, promptIncludes: "Keep the token secret" },
      reply: [reply.json({ passed: true, summary: "fine", findings: [] })],
    });
    const sampler = sampleArgv();
    const taskId = await h.approvedTask(chat, { title: "Keep the token secret", repos: ["acme/secret"] });
    await h.waitForText(chat, "is done", 150_000).catch(async (err: unknown) => {
      await sampler.stop();
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
    const argv = await sampler.stop();

    // The task really went through the authenticated host: clone, fetch and push carried the token.
    const task = await h.task(taskId);
    expect(await h.git("acme/secret", ["show", `refs/heads/${task.branch}:note.txt`])).toBe("no secrets here\n");
    const expected = `Basic ${Buffer.from(`ratatoskr:${TOKEN}`).toString("base64")}`;
    expect(host.requests.some((r) => r.path.endsWith("/git-receive-pack") && r.authorization === expected && r.status === 200)).toBe(true);

    // argv, sampled all along; at least one git process was caught in the act.
    expect(argv.leaks).toEqual([]);
    expect(argv.samples).toBeGreaterThan(20);
    expect(argv.gitProcesses).toBeGreaterThan(0);

    // No log line of any service, in any encoding a log would use.
    const encodings = [TOKEN, Buffer.from(TOKEN).toString("base64"), expected.slice("Basic ".length)];
    for (const service of h.running.values()) {
      for (const secret of encodings) expect(service.output().includes(secret), `${service.name} logged the token`).toBe(false);
    }

    // No working tree's git config, nor any other file git keeps there, names it.
    const configs = await gitConfigs(join(h.root, "workspaces"));
    expect(configs.length).toBeGreaterThanOrEqual(2); // the dev's and the reviewer's clones
    for (const file of configs) {
      const text = await readFile(file, "utf8");
      expect(text, file).not.toContain(TOKEN);
      expect(text, file).not.toMatch(/:\/\/[^/\s]*@/);
    }
  }, 300_000);
});
