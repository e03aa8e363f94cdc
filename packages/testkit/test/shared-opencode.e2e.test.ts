import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it, vi } from "vitest";
import { reply, startTestOpencode, TEST_OPENCODE_IDLE_VAR, type TestOpencode } from "../src/index.ts";

const AGENTS = { helper: { prompt: "You are the SHARING test agent." } };
const started: TestOpencode[] = [];

async function take(options: { own?: boolean } = {}): Promise<TestOpencode> {
  const agents = await startTestOpencode({ agents: AGENTS, ...options });
  started.push(agents);
  return agents;
}

afterAll(async () => {
  for (const { opencode, model } of started) await Promise.allSettled([opencode.stop(), model.close()]);
});

/** One prompt through opencode's v2 API, once the directory has booted (a turn admitted before is never run). */
async function prompt(agents: TestOpencode, directory: string, text: string): Promise<void> {
  const headers = {
    authorization: `Basic ${Buffer.from(`opencode:${agents.opencode.password}`).toString("base64")}`,
    "content-type": "application/json",
  };
  const booted = `${agents.opencode.url}/api/provider/fake?location%5Bdirectory%5D=${encodeURIComponent(directory)}`;
  await expect.poll(async () => (await fetch(booted, { headers })).status, { timeout: 30_000, interval: 100 }).toBe(200);
  const created = await fetch(`${agents.opencode.url}/api/session`, {
    method: "POST",
    headers,
    body: JSON.stringify({ agent: "helper", location: { directory } }),
  });
  expect(created.status).toBe(200);
  const session = ((await created.json()) as { data: { id: string } }).data;
  const admitted = await fetch(`${agents.opencode.url}/api/session/${session.id}/prompt`, {
    method: "POST",
    headers,
    body: JSON.stringify({ prompt: { text } }),
  });
  expect(admitted.ok).toBe(true);
}

describe("the opencode server a vitest worker's files share", () => {
  it("is one server for files one after another; each file's sessions reach only its own rules and requests", async () => {
    const first = await take();
    first.model.addRule({ match: { promptIncludes: "ping" }, reply: [reply.text("first file")] });
    const firstDir = await first.opencode.makeWorkDir("task");
    await prompt(first, firstDir, "ping from the first file");
    await expect.poll(() => first.model.requests.length, { timeout: 30_000 }).toBeGreaterThan(0);
    await first.opencode.stop();
    await first.model.close();
    expect(existsSync(firstDir)).toBe(false);

    const second = await take();
    expect(second.opencode.url).toBe(first.opencode.url);
    second.model.addRule({ match: { promptIncludes: "ping" }, reply: [reply.text("second file")] });
    const secondDir = await second.opencode.makeWorkDir("task");
    await prompt(second, secondDir, "ping from the second file");
    await expect.poll(() => second.model.requests.length, { timeout: 30_000 }).toBeGreaterThan(0);

    expect(first.model.requests.every((r) => r.system.includes(firstDir))).toBe(true);
    expect(second.model.requests.every((r) => r.system.includes(secondDir))).toBe(true);
    expect(second.model.requests.map((r) => r.lastUserText)).not.toContain("ping from the first file");
  });

  it("is one server for one agents directory however its path is spelled", async () => {
    const agentsDir = fileURLToPath(new URL("../../../agents/", import.meta.url));
    const spelledOneWay = await startTestOpencode({ agentsDir });
    started.push(spelledOneWay);
    const spelledAnother = await startTestOpencode({ agentsDir: agentsDir.replace(/\/$/, "") });
    started.push(spelledAnother);
    expect(spelledAnother.opencode.processGroup).toBe(spelledOneWay.opencode.processGroup);
  });

  it("refuses to freeze a shared server, and starts a file's own server when it asks", async () => {
    const shared = await take();
    expect(() => shared.opencode.freeze()).toThrow(/own: true/);
    const own = await take({ own: true });
    expect(own.opencode.url).not.toBe(shared.opencode.url);
    own.opencode.freeze();
    own.opencode.thaw();
  });

  it("stops a shared server once no file has taken it for a while, and starts a new one for the next file", async () => {
    vi.stubEnv(TEST_OPENCODE_IDLE_VAR, "300");
    try {
      const idleAgents = { agents: { idle: { prompt: "You are the IDLE test agent." } } };
      const last = await startTestOpencode(idleAgents);
      const group = last.opencode.processGroup;
      await last.opencode.stop();
      await last.model.close();
      await expect.poll(() => existsSync(`/proc/${group}`), { timeout: 15_000 }).toBe(false);
      const next = await startTestOpencode(idleAgents);
      started.push(next);
      expect(next.opencode.processGroup).not.toBe(group);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
