import { reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SilentSessionError } from "../src/index.ts";
import { marker, startOpencodeFixture, type OpencodeFixture } from "./support/opencode-fixture.ts";
import { recordingClient } from "./support/recording-client.ts";

const RUN = { agent: "judge", policy: {}, idleTimeoutMs: 20_000, hardTimeoutMs: 60_000 };
/** The requests that wait for opencode to boot a location. */
const isBootCheck = (route: string) => route.startsWith("GET /api/provider") || route.startsWith("GET /api/model");

let fx: OpencodeFixture;
beforeAll(async () => {
  fx = await startOpencodeFixture();
});
afterAll(async () => {
  await fx?.stop();
});

describe("warmDirectory (a directory booted before its first run)", () => {
  it("boots the directory ahead of time, so the first run there waits for no boot", async () => {
    const rec = recordingClient(fx);
    try {
      const directory = await fx.server.makeWorkDir("prewarmed");
      await rec.client.warmDirectory(directory);
      expect(rec.sent.filter((s) => isBootCheck(s.route)).length).toBeGreaterThan(0);

      const m = marker("prewarmed");
      fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.text("warm already")] });
      const since = Date.now();
      const result = await rec.client.runAgent({ ...RUN, directory, prompt: m });
      expect(result.outcome).toBe("ok");
      expect(result.output).toBe("warm already");
      expect(rec.sentSince(since).filter((s) => isBootCheck(s.route))).toEqual([]);
    } finally {
      await rec.close();
    }
  });

  it("waits for the directory again after a silent session there (the server may have lost it)", async () => {
    const rec = recordingClient(fx);
    try {
      const directory = await fx.server.makeWorkDir("forgotten");
      await rec.client.warmDirectory(directory);
      const silent = await rec.client.runAgent({ ...RUN, directory, prompt: "anyone?", model: "fake/missing-model" });
      expect(silent.error).toBeInstanceOf(SilentSessionError);

      const m = marker("rewarmed");
      fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.text("back")] });
      const since = Date.now();
      const result = await rec.client.runAgent({ ...RUN, directory, prompt: m });
      expect(result.outcome).toBe("ok");
      expect(rec.sentSince(since).filter((s) => isBootCheck(s.route)).length).toBeGreaterThan(0);
    } finally {
      await rec.close();
    }
  });
});

/** The server's global event stream, collected as text until `stop()`. */
function globalEvents(): { text(): string; stop(): void } {
  const abort = new AbortController();
  let text = "";
  void (async () => {
    const res = await fetch(`${fx.server.url}/global/event`, {
      headers: { authorization: `Basic ${Buffer.from(`opencode:${fx.server.password}`).toString("base64")}` },
      signal: abort.signal,
    });
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) text += Buffer.from(chunk).toString("utf8");
  })().catch(() => undefined);
  return { text: () => text, stop: () => abort.abort() };
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("releaseDirectory (an ended task's location let go)", () => {
  it("has the server dispose a directory a run used; the next run there boots it again", async () => {
    const rec = recordingClient(fx);
    const events = globalEvents();
    try {
      const directory = await fx.server.makeWorkDir("released");
      const m = marker("before-release");
      fx.model.addRule({ match: { promptIncludes: m }, reply: [reply.text("first")] });
      expect((await rec.client.runAgent({ ...RUN, directory, prompt: m })).output).toBe("first");

      expect(await rec.client.releaseDirectory(directory)).toBe(1);
      await waitFor(() => events.text().includes("server.instance.disposed") && events.text().includes(directory), "the server's instance.disposed event");

      const again = marker("after-release");
      fx.model.addRule({ match: { promptIncludes: again }, reply: [reply.text("second")] });
      const since = Date.now();
      const result = await rec.client.runAgent({ ...RUN, directory, prompt: again });
      expect(result.output).toBe("second");
      expect(rec.sentSince(since).filter((s) => isBootCheck(s.route)).length).toBeGreaterThan(0);
    } finally {
      events.stop();
      await rec.close();
    }
  });

  it("sends nothing for a directory no run of this client met (disposing would boot it first)", async () => {
    const rec = recordingClient(fx);
    try {
      const directory = await fx.server.makeWorkDir("never-used");
      expect(await rec.client.releaseDirectory(directory)).toBe(0);
      expect(rec.sent.map((s) => s.route)).toEqual([]);
    } finally {
      await rec.close();
    }
  });
});

