import { reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpencodeClient, RunStoppedError, type RunAgentOptions } from "../src/index.ts";
import { marker, startOpencodeFixture, warmSharedDir, type OpencodeFixture } from "./support/opencode-fixture.ts";

// A frozen opencode (SIGSTOP mid-turn) keeps its connections open and answers nothing: the
// client's deadlines must hold anyway, and the result must say the interrupt did not get through.

let fx: OpencodeFixture;
beforeAll(async () => {
  fx = await startOpencodeFixture({ own: true }); // its tests freeze the server
  await warmSharedDir(fx);
}, 90_000);
afterAll(async () => {
  fx?.server.thaw();
  await fx?.stop();
});

async function waitFor(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Starts a run whose model streams for a long time, freezes the server once the model is called. */
async function frozenRun(name: string, options: Partial<RunAgentOptions>) {
  const m = marker(name);
  fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.text("y".repeat(100), { chunks: 100, chunkDelayMs: 300 })] });
  const run = fx.client.runAgent({ agent: "judge", directory: fx.sharedDir, prompt: `stream ${m}`, policy: {}, idleTimeoutMs: 30_000, hardTimeoutMs: 60_000, ...options });
  await waitFor("the model to be called", () => fx.model.requests.some((r) => r.lastUserText.includes(m)));
  fx.server.freeze();
  return { run, frozenAt: Date.now() };
}

describe("a frozen opencode server", () => {
  it("keeps the hard timeout: returns within ~2 s of it and says the interrupt failed", async () => {
    const started = Date.now();
    const { run } = await frozenRun("frozen-hard", { hardTimeoutMs: 8_000 });
    try {
      const result = await run;
      expect(result.outcome).toBe("timeout");
      expect(result.timeoutKind).toBe("hard");
      expect(Date.now() - started).toBeLessThan(8_000 + 2_500);
      expect(result.error).toBeInstanceOf(RunStoppedError);
      expect((result.error as RunStoppedError).interrupted).toBe(false);
      expect(result.error?.message).toMatch(/hard timeout of 8000 ms reached; could not interrupt session ses_\w+ \(opencode did not answer the interrupt within \d+ ms\); it may still be running/);
    } finally {
      fx.server.thaw();
    }
  }, 30_000);

  it("keeps the idle timeout, the nearer deadline", async () => {
    const { run, frozenAt } = await frozenRun("frozen-idle", { idleTimeoutMs: 3_000 });
    try {
      const result = await run;
      expect(result.outcome).toBe("timeout");
      expect(result.timeoutKind).toBe("idle");
      expect(Date.now() - frozenAt).toBeLessThan(3_000 + 2_500);
      expect(result.error?.message).toMatch(/could not interrupt session/);
    } finally {
      fx.server.thaw();
    }
  }, 30_000);

  it("returns a cancel within ~2 s of the abort", async () => {
    const controller = new AbortController();
    const { run } = await frozenRun("frozen-abort", { signal: controller.signal });
    try {
      // Let the watcher get stuck in requests to the frozen server first.
      await new Promise((r) => setTimeout(r, 1_000));
      const abortedAt = Date.now();
      controller.abort();
      const result = await run;
      expect(result.outcome).toBe("cancelled");
      expect(Date.now() - abortedAt).toBeLessThan(2_500);
      expect(result.error?.message).toMatch(/^run cancelled by the caller; could not interrupt session ses_\w+ .*it may still be running$/);
    } finally {
      fx.server.thaw();
    }
  }, 30_000);

  it("words the message by the interrupt's success once the server answers again", async () => {
    const controller = new AbortController();
    const m = marker("thawed-abort");
    fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.text("never", { delayMs: 30_000 })] });
    const run = fx.client.runAgent({ agent: "judge", directory: fx.sharedDir, prompt: `wait ${m}`, policy: {}, idleTimeoutMs: 30_000, hardTimeoutMs: 60_000, signal: controller.signal });
    await waitFor("the model to be called", () => fx.model.requests.some((r) => r.lastUserText.includes(m)));
    controller.abort();
    const result = await run;
    expect(result.outcome).toBe("cancelled");
    expect(result.error?.message).toMatch(/^run cancelled by the caller; session ses_\w+ interrupted$/);
  }, 30_000);

  it("waits out a stall longer than the request timeout while creating the session, within the run's deadline", async () => {
    const client = createOpencodeClient({ baseUrl: fx.server.url, password: fx.server.password, defaultModel: "fake/scripted", requestTimeoutMs: 1_000 });
    try {
      await client.warmDirectory(fx.sharedDir);
      const m = marker("stalled-create");
      fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.text("after the stall")] });
      fx.server.freeze();
      const run = client.runAgent({ agent: "judge", directory: fx.sharedDir, prompt: m, policy: {}, idleTimeoutMs: 30_000, hardTimeoutMs: 60_000 });
      await new Promise((r) => setTimeout(r, 2_500)); // the stall itself: longer than the 1 s request timeout
      fx.server.thaw();
      const result = await run;
      expect(result.error).toBeUndefined();
      expect(result.outcome).toBe("ok");
      expect(result.output).toBe("after the stall");
    } finally {
      fx.server.thaw();
      await client.close();
    }
  }, 60_000);
});
