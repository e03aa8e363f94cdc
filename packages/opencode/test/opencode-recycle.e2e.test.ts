import { reply, startOpencodeServer, startScriptedModel, type OpencodeServer, type ScriptedModel } from "@ratatoskr/testkit";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpencodeClient, type OpencodeClient } from "../src/index.ts";
import { marker } from "./support/opencode-fixture.ts";

/**
 * deploy/opencode/recycle.mjs in front of a real opencode: over its memory limit (1 MB here, so
 * always), it restarts opencode at the first lull, never under a running turn, at most once per
 * gap. What a person would notice is the runs: every one is answered, none is cut or lost.
 */
const RUN = { agent: "judge", policy: {}, idleTimeoutMs: 20_000, hardTimeoutMs: 60_000 };
const GAP_MS = 5_000;

let model: ScriptedModel;
let server: OpencodeServer;
let client: OpencodeClient;
const warnings: string[] = [];

beforeAll(async () => {
  model = await startScriptedModel();
  server = await startOpencodeServer({
    provider: { baseUrl: model.url },
    agents: { judge: { prompt: "You are the JUDGE test agent.", permission: { edit: "deny", bash: "deny" } } },
    env: { OPENCODE_RECYCLE_MB: "1", OPENCODE_RECYCLE_CHECK_MS: "250", OPENCODE_RECYCLE_MIN_GAP_MS: String(GAP_MS) },
  });
  client = createOpencodeClient({ baseUrl: server.url, password: server.password, logger: { warn: (_d, message) => warnings.push(message) } });
}, 60_000);

afterAll(async () => {
  await client?.close();
  await server?.stop();
  await model?.close();
});

/** The pids opencode was recycled into, from the relay's log. */
const recycles = (): number[] =>
  [...server.output().matchAll(/"msg":"opencode recycled".*?"pid":(\d+)|"pid":(\d+)[^\n]*"msg":"opencode recycled"/g)].map((m) => Number(m[1] ?? m[2]));

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${server.output().slice(-3_000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function answered(directory: string, text: string, delayMs = 0, by: OpencodeClient = client, sessionId?: string) {
  const m = marker("recycle");
  model.addRule({ match: { promptIncludes: m }, reply: [{ ...reply.text(text), delayMs }] });
  return by.runAgent({ ...RUN, directory, prompt: `${m} say ${text}`, ...(sessionId ? { sessionId } : {}) });
}

describe("opencode behind its recycling relay", () => {
  it("restarts opencode when it is idle and over its limit; the directories used again are loaded again, the others not", async () => {
    // One client pins the model (it warms a directory by its provider), one does not (by the model list).
    const pinned = createOpencodeClient({ baseUrl: server.url, password: server.password, defaultModel: "fake/scripted" });
    try {
      const [byProvider, byModels, unused] = await Promise.all([
        server.makeWorkDir("warmed-provider"),
        server.makeWorkDir("warmed-models"),
        server.makeWorkDir("warmed-unused"),
      ]);
      expect((await answered(byProvider, "before", 0, pinned)).output).toBe("before");
      const beforeToo = await answered(byModels, "before too");
      expect(beforeToo.output).toBe("before too");
      expect((await answered(unused, "before three")).output).toBe("before three");
      const seen = recycles().length;
      await until("a recycle while idle", () => (recycles().length > seen ? true : undefined));
      const restartedAt = server.output().length;

      // Each client warmed its directory before the restart and goes on there at once, one in a
      // new session, the other prompting its session from before: the relay has the new opencode
      // load each directory before that request goes through.
      const after = await Promise.all([
        answered(byProvider, "after", 0, pinned),
        answered(byModels, "after too", 0, client, beforeToo.sessionId),
      ]);
      expect(after.map((r) => [r.outcome, r.output])).toEqual([
        ["ok", "after"],
        ["ok", "after too"],
      ]);
      expect(warnings).toEqual([]);
      expect(model.requests.filter((r) => r.userTexts.some((t) => / say after( too)?$/.test(t)))).toHaveLength(2);
      // Only those two were loaded again: a directory nobody used after the restart costs nothing.
      const loadedAgain = new Set(
        [...server.output().slice(restartedAt).matchAll(/"msg":"directory loaded again","directory":"([^"]+)"/g)].map((m) => m[1]),
      );
      expect([byProvider, byModels, unused].filter((d) => loadedAgain.has(d))).toEqual([byProvider, byModels]);
    } finally {
      await pinned.close();
    }
  }, 90_000);

  it("never restarts under a running turn, and holds new sessions for the restart instead of failing them", async () => {
    const [slowDir, heldDir] = await Promise.all([server.makeWorkDir("slow"), server.makeWorkDir("held")]);
    // The turn outlasts the gap: while it runs, the relay wants to recycle at every check.
    const before = recycles().length;
    const slow = answered(slowDir, "slow", GAP_MS + 2_000);
    await until("the slow turn to run", () => (model.requests.some((r) => r.userTexts.some((t) => t.includes("say slow"))) ? true : undefined));
    const held = answered(heldDir, "held");

    const [slowRun, heldRun] = await Promise.all([slow, held]);
    expect(slowRun.outcome).toBe("ok");
    expect(slowRun.output).toBe("slow");
    expect(heldRun.outcome).toBe("ok");
    expect(heldRun.output).toBe("held");
    // Each asked of the model once: no turn was cut and sent again.
    const asked = (text: string) => model.requests.filter((r) => r.userTexts.some((t) => t.includes(`say ${text}`))).length;
    expect([asked("slow"), asked("held")]).toEqual([1, 1]);
    await until("a recycle after the turn", () => (recycles().length > before ? true : undefined));
  }, 90_000);

  it("passes a terminal's WebSocket through to opencode", async () => {
    // The relay is always over its limit here and recycles at every lull; a restart closes a
    // terminal (its pty lived in the old opencode). An attempt a restart cut short is given up as
    // soon as the new opencode listens and made again at once: the relay leaves a fresh opencode
    // alone for GAP_MS, time enough for an attempt. One that no restart touched must show the
    // terminal's output.
    const starts = () => server.output().split("opencode server listening").length;
    const deadline = Date.now() + 75_000;
    for (;;) {
      const before = starts();
      const received = await terminalThroughRelay(() => starts() !== before).catch((err: unknown) => ({ error: err as Error }));
      if (typeof received === "string") {
        expect(received.startsWith("HTTP/1.1 101 Switching Protocols")).toBe(true);
        return;
      }
      if (starts() === before || Date.now() > deadline) throw received.error;
    }
  }, 90_000);
});

/**
 * Opens a pty running `echo` and connects to it through the relay; resolves with what came back,
 * rejects when `restarted()` says opencode was restarted meanwhile.
 */
async function terminalThroughRelay(restarted: () => boolean): Promise<string> {
  const auth = `Basic ${Buffer.from(`opencode:${server.password}`).toString("base64")}`;
  const created = await fetch(`${server.url}/pty`, {
    method: "POST",
    headers: { authorization: auth, "content-type": "application/json" },
    body: JSON.stringify({ command: "/bin/echo", args: ["through the relay"] }),
  });
  const { id } = (await created.json()) as { id: string };
  const socket = connect(Number(new URL(server.url).port), "127.0.0.1");
  let received = "";
  socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
  socket.on("error", () => undefined);
  socket.write(
    [`GET /pty/${id}/connect HTTP/1.1`, "Host: 127.0.0.1", `Authorization: ${auth}`, "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13", "", ""].join("\r\n"),
  );
  try {
    await until(
      "the terminal's output over the WebSocket",
      () => {
        if (received.includes("through the relay")) return true;
        if (restarted()) throw new Error("opencode was restarted under the terminal");
        return undefined;
      },
      15_000,
    );
    return received;
  } finally {
    socket.destroy();
  }
}
