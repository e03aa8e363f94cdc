import { reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { marker, startOpencodeFixture, warmSharedDir, type OpencodeFixture } from "./support/opencode-fixture.ts";

let fx: OpencodeFixture;
beforeAll(async () => {
  fx = await startOpencodeFixture();
  await warmSharedDir(fx);
}, 90_000);
afterAll(async () => {
  await fx?.stop();
});

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function isActive(sessionId: string): Promise<boolean> {
  const res = await fetch(`${fx.server.url}/api/session/active`, {
    headers: { authorization: `Basic ${Buffer.from(`opencode:${fx.server.password}`).toString("base64")}` },
  });
  return sessionId in ((await res.json()) as { data: Record<string, unknown> }).data;
}

/** The model call of this prompt was hung up by opencode: the interrupt reached the running turn. */
function modelCallAborted(m: string): () => boolean {
  return () => fx.model.requests.some((r) => r.lastUserText.includes(m) && r.aborted);
}

describe("interrupting runs", () => {
  it("times out on idle, interrupts the session and keeps its id", async () => {
    const m = marker("idle");
    fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.text("too late", { delayMs: 30_000 })] });
    const started = Date.now();
    const result = await fx.client.runAgent({ agent: "judge", directory: fx.sharedDir, prompt: `think ${m}`, policy: {}, idleTimeoutMs: 1_200, hardTimeoutMs: 20_000 });

    expect(result.outcome).toBe("timeout");
    expect(result.timeoutKind).toBe("idle");
    expect(result.error?.message).toMatch(/idle timeout/);
    expect(result.sessionId).toMatch(/^ses/);
    expect(result.trace).toMatchObject({ outcome: "timeout", sessionId: result.sessionId });
    expect(Date.now() - started).toBeLessThan(6_000);
    await waitFor("the model call to be hung up", modelCallAborted(m));
    await waitFor("the session to stop", async () => !(await isActive(result.sessionId as string)));
  });

  it("hits the hard timeout while the model keeps streaming (progress resets idle)", async () => {
    const m = marker("hard");
    const text = "x".repeat(200);
    fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.text(text, { chunks: 100, chunkDelayMs: 100 })] });
    const result = await fx.client.runAgent({ agent: "judge", directory: fx.sharedDir, prompt: `stream ${m}`, policy: {}, idleTimeoutMs: 1_500, hardTimeoutMs: 3_500 });

    expect(result.outcome).toBe("timeout");
    expect(result.timeoutKind).toBe("hard");
    expect(result.sessionId).toMatch(/^ses/);
    await waitFor("the model call to be hung up", modelCallAborted(m));
  });

  it("returns cancelled when the caller aborts, and interrupts the session", async () => {
    const m = marker("cancel");
    fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.text("never", { delayMs: 30_000 })] });
    const controller = new AbortController();
    const run = fx.client.runAgent({ agent: "judge", directory: fx.sharedDir, prompt: `wait ${m}`, policy: {}, idleTimeoutMs: 20_000, hardTimeoutMs: 25_000, signal: controller.signal });
    await waitFor("the model to be called", () => fx.model.requests.some((r) => r.lastUserText.includes(m)));
    controller.abort();
    const result = await run;

    expect(result.outcome).toBe("cancelled");
    expect(result.error?.message).toMatch(/cancelled/);
    expect(result.sessionId).toMatch(/^ses/);
    await waitFor("the model call to be hung up", modelCallAborted(m));
    await waitFor("the session to stop", async () => !(await isActive(result.sessionId as string)));
  });
});
