import { reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHATS, DEV, POSTMORTEM, PipelineHarness, REVIEWER, waitFor } from "./pipeline-harness.ts";

/**
 * O7 for every agent service: two real opencode servers in OPENCODE_URLS. The dev and reviewer
 * sessions of tasks run at once are spread over both; a session continued later — a retried job
 * after its dev process was killed, `/continue N` after a timeout — goes back to the server that
 * holds it, even when the process that continues it would place a new session elsewhere.
 */
const h = new PipelineHarness();
const IDLE_MS = 8_000;

beforeAll(async () => {
  await h.start(["ingress", "dev", "reviewer", "notifier", "postmortem"], {}, undefined, { servers: 2 });
}, 180_000);

afterAll(async () => {
  await h.stop();
});

function passingRules(title: string, file: string): void {
  h.model.addRule({
    match: { systemIncludes: DEV, promptIncludes: title },
    reply: [reply.write(file, `${title}\n`), reply.json({ summary: "done", done: true })],
  });
  h.model.addRule({
    match: { systemIncludes: REVIEWER, promptIncludes: title },
    reply: [reply.json({ passed: true, summary: "fine", findings: [] })],
  });
}

async function servers(taskIds: number[], agent: string): Promise<Set<string | null>> {
  const traces = (await Promise.all(taskIds.map((id) => h.traces(id)))).flat();
  return new Set(traces.filter((t) => t.agent === agent).map((t) => t.serverUrl));
}

/** A service restarted with the servers in `order` (a new process places its first new session on the first). */
async function restartWith(name: "dev" | "reviewer", order: string[], env: NodeJS.ProcessEnv = {}): Promise<void> {
  await h.running.get(name)!.stop("SIGKILL");
  h.running.delete(name);
  h.running.set(name, await h.startService(name, { OPENCODE_URLS: order.join(","), ...env }));
}
const restartDev = (order: string[], env: NodeJS.ProcessEnv = {}) => restartWith("dev", order, env);

describe("a pool of two opencode servers", () => {
  it("spreads the tasks run at once over both servers; each task's review runs where its dev ran", async () => {
    // The reviewer lists the servers the other way round: placed on its own, each review would
    // go where its dev did not.
    await restartWith("reviewer", h.pool.map((s) => s.url).reverse());
    const titles = ["Pool task one", "Pool task two", "Pool task three", "Pool task four"];
    const taskIds: number[] = [];
    for (const [i, title] of titles.entries()) {
      const repo = `acme/pool-${i}`;
      await h.repo(repo);
      passingRules(title, `${repo}/file-${i}.txt`);
      taskIds.push(await h.approvedTask(CHATS[i]!, { title, repos: [repo] }));
    }
    for (const [i, taskId] of taskIds.entries()) {
      await h.waitForText(CHATS[i]!, "is done", 180_000).catch((err: unknown) => {
        throw new Error(`task ${taskId}: ${String(err)}\n${h.logs()}`);
      });
    }
    const urls = new Set(h.pool.map((s) => s.url));
    expect(await servers(taskIds, "dev")).toEqual(urls);
    expect(await servers(taskIds, "reviewer")).toEqual(urls);
    // The reviewer works in the dev's directory: on the dev's server it is loaded already.
    for (const taskId of taskIds) {
      const traces = await h.traces(taskId);
      const on = (agent: string) => [...new Set(traces.filter((t) => t.agent === agent).map((t) => t.serverUrl))];
      expect({ taskId, reviewer: on("reviewer") }).toEqual({ taskId, reviewer: on("dev") });
    }
  }, 300_000);

  it("a dev job retried after its process was killed resumes its session on the server holding it", async () => {
    const chat = CHATS[4]!;
    const title = "Survive a dev crash on the pool";
    await h.repo("acme/pool-crash");
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: title },
      reply: [reply.write("acme/pool-crash/first.txt", "first\n"), reply.json({ summary: "never seen", done: true }, { delayMs: 120_000 })],
    });
    passingRules(title, "acme/pool-crash/second.txt");
    const taskId = await h.approvedTask(chat, { title, repos: ["acme/pool-crash"] });
    const stuck = await waitFor(h, async () =>
      h.model.requests.find((r) => r.isToolResult && r.system.includes(DEV) && r.userTexts.some((t) => t.includes(title))),
      120_000,
    );
    const [dead] = await h.traces(taskId);
    expect(dead).toMatchObject({ agent: "dev", outcome: "running", sessionId: stuck.sessionId });
    const holder = dead!.serverUrl!;
    const other = h.pool.map((s) => s.url).find((u) => u !== holder)!;
    // The new process would open a new session on `other`: only going back to `holder` continues the run.
    await restartDev([other, holder], { DEV_IDLE_TIMEOUT_MS: String(IDLE_MS) });

    await h.waitForText(chat, "is done", 150_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
    const devRuns = (await h.traces(taskId)).filter((t) => t.agent === "dev");
    expect(devRuns.map((t) => [t.outcome, t.sessionId, t.serverUrl])).toEqual([
      ["interrupted", stuck.sessionId, holder],
      ["completed", stuck.sessionId, holder],
    ]);
    expect((await h.task(taskId)).agentServerUrl).toBe(holder);
  }, 300_000);

  it("/continue N after a timeout resumes the session on the server holding it", async () => {
    const chat = CHATS[5]!;
    const title = "Time out on the pool";
    await h.repo("acme/pool-idle");
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: "your previous run stopped before it finished" },
      reply: [reply.write("acme/pool-idle/second.txt", "second\n"), reply.json({ summary: "finished", done: true })],
    });
    h.model.addRule({
      match: { systemIncludes: DEV, promptIncludes: title },
      reply: [reply.write("acme/pool-idle/first.txt", "first\n"), reply.json({ summary: "late", done: true }, { delayMs: 120_000 })],
    });
    h.model.addRule({ match: { systemIncludes: REVIEWER, promptIncludes: title }, reply: [reply.json({ passed: true, summary: "fine", findings: [] })] });
    h.model.addRule({
      match: { systemIncludes: POSTMORTEM, promptIncludes: title },
      reply: [reply.json({ cause: "the model stopped answering", progress: "first.txt is pushed", nextSteps: ["/continue"] })],
    });
    const taskId = await h.approvedTask(chat, { title, repos: ["acme/pool-idle"] });
    await h.waitForText(chat, "after the timeout", 120_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
    const timedOut = await h.task(taskId);
    expect(timedOut.status).toBe("timeout");
    const holder = timedOut.agentServerUrl!;
    expect(h.pool.map((s) => s.url)).toContain(holder);
    const other = h.pool.map((s) => s.url).find((u) => u !== holder)!;
    await restartDev([other, holder]);

    h.telegram.sendText(chat, `/continue ${taskId}`);
    await h.waitForText(chat, "is done", 120_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.logs()}`);
    });
    const devRuns = (await h.traces(taskId)).filter((t) => t.agent === "dev");
    expect(devRuns.map((t) => [t.outcome, t.sessionId, t.serverUrl])).toEqual([
      ["timeout", timedOut.agentSessionId, holder],
      ["completed", timedOut.agentSessionId, holder],
    ]);
    // The postmortem ran on the pool too.
    expect(h.pool.map((s) => s.url)).toContain((await h.traces(taskId)).find((t) => t.agent === "postmortem")?.serverUrl);
  }, 300_000);
});
