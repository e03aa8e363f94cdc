import { reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpencodeClient, RunStoppedError } from "../src/index.ts";
import { marker, startOpencodeFixture, type OpencodeFixture } from "./support/opencode-fixture.ts";

const RUN = { idleTimeoutMs: 10_000, hardTimeoutMs: 25_000, policy: { default: "deny" as const } };

let fx: OpencodeFixture;
beforeAll(async () => {
  fx = await startOpencodeFixture();
});
afterAll(async () => {
  await fx?.stop();
});

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Another process's client: knows nothing of the sessions `fx.client` started. */
function otherClient() {
  return createOpencodeClient({ baseUrl: fx.server.url, password: fx.server.password, defaultModel: "fake/scripted" });
}

describe("resuming and interrupting existing sessions", () => {
  it("continues a session by id with a new prompt instead of starting a second one", async () => {
    const m = marker("resume");
    fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.text("first answer"), reply.text("second answer")] });
    const first = await fx.client.runAgent({ ...RUN, agent: "judge", directory: fx.sharedDir, prompt: `one ${m}` });
    expect(first.outcome).toBe("ok");
    expect(first.resumed).toBe(false);

    const other = otherClient();
    try {
      const second = await other.runAgent({ ...RUN, agent: "judge", directory: fx.sharedDir, prompt: `two ${m}`, sessionId: first.sessionId as string, serverUrl: first.serverUrl });
      expect(second.outcome).toBe("ok");
      expect(second.resumed).toBe(true);
      expect(second.sessionId).toBe(first.sessionId);
      expect(second.output).toBe("second answer");
      expect(second.trace.serverUrl).toBe(fx.server.url);
      const calls = fx.model.requestsFor(first.sessionId as string);
      expect(calls).toHaveLength(2);
      expect(calls[1]?.userTexts.join("|")).toMatch(/one .*\|two /);
    } finally {
      await other.close();
    }
  });

  it("interrupts the old turn of a resumed session before the new prompt (a retried job)", async () => {
    const m = marker("resume-running");
    fx.model.addRule({ match: { promptIncludes: `stuck ${m}` }, reply: [reply.text("never", { delayMs: 30_000 })] });
    fx.model.addRule({ match: { promptIncludes: `retry ${m}` }, reply: [reply.text("retried answer")] });
    const crashed = new AbortController();
    const firstAttempt = fx.client.runAgent({ ...RUN, agent: "judge", directory: fx.sharedDir, prompt: `stuck ${m}`, signal: crashed.signal });
    await waitFor("the first attempt to reach the model", () => fx.model.requests.some((r) => r.lastUserText.includes(`stuck ${m}`)));
    const sessionId = fx.model.requests.find((r) => r.lastUserText.includes(`stuck ${m}`))?.sessionId as string;

    const other = otherClient();
    try {
      const retry = await other.runAgent({ ...RUN, agent: "judge", directory: fx.sharedDir, prompt: `retry ${m}`, sessionId });
      expect(retry.outcome).toBe("ok");
      expect(retry.sessionId).toBe(sessionId);
      expect(retry.output).toBe("retried answer");
      expect(retry.warnings.join()).toMatch(/still running a turn/);
      expect(fx.model.requests.find((r) => r.lastUserText.includes(`stuck ${m}`))?.aborted).toBe(true);
    } finally {
      crashed.abort();
      await firstAttempt;
      await other.close();
    }
  });

  it("interrupts a running session it did not start", async () => {
    const m = marker("foreign-interrupt");
    fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.text("never", { delayMs: 30_000 })] });
    const run = fx.client.runAgent({ ...RUN, agent: "judge", directory: fx.sharedDir, prompt: `wait ${m}` });
    await waitFor("the model to be called", () => fx.model.requests.some((r) => r.lastUserText.includes(m)));
    const sessionId = fx.model.requests.find((r) => r.lastUserText.includes(m))?.sessionId as string;
    const other = otherClient();
    try {
      await other.interrupt(sessionId, fx.server.url);
      await waitFor("the model call to be hung up", () => fx.model.requests.some((r) => r.lastUserText.includes(m) && r.aborted));
      const result = await run;
      expect(result.outcome).not.toBe("ok");
      // Interrupting an unknown session is a no-op, not an error.
      await other.interrupt("ses_doesnotexist");
    } finally {
      await other.close();
    }
  });

  it("starts a new session, with a warning, when the session to resume no longer exists", async () => {
    const m = marker("resume-gone");
    fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.text("fresh answer")] });
    const result = await fx.client.runAgent({ ...RUN, agent: "judge", directory: fx.sharedDir, prompt: `again ${m}`, sessionId: "ses_gone0000000000000000000" });
    expect(result.outcome).toBe("ok");
    expect(result.resumed).toBe(false);
    expect(result.sessionId).not.toBe("ses_gone0000000000000000000");
    expect(result.warnings.join()).toMatch(/no longer exists/);
  });

  it("says the session was interrupted only when opencode confirmed it", async () => {
    const m = marker("cancel-words");
    fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.text("never", { delayMs: 30_000 })] });
    const controller = new AbortController();
    const run = fx.client.runAgent({ ...RUN, agent: "judge", directory: fx.sharedDir, prompt: `wait ${m}`, signal: controller.signal });
    await waitFor("the model to be called", () => fx.model.requests.some((r) => r.lastUserText.includes(m)));
    controller.abort();
    const result = await run;
    expect(result.outcome).toBe("cancelled");
    expect(result.error).toBeInstanceOf(RunStoppedError);
    expect((result.error as RunStoppedError).interrupted).toBe(true);
    expect(result.error?.message).toMatch(/cancelled by the caller; session ses\S+ interrupted/);
  });
});
