import { describe, expect, it } from "vitest";
import type { OpencodeHttp } from "../src/http/opencode-http.ts";
import { EventHub } from "../src/run/event-hub.ts";
import { parseSessionEvent } from "../src/run/event-kinds.ts";

const event = (type: string, data: Record<string, unknown>) => `data: ${JSON.stringify({ id: "evt_1", type, data })}\n\n`;

describe("parseSessionEvent", () => {
  it("tells turn ends, requests and plain progress apart", () => {
    const kind = (type: string, data: Record<string, unknown> = {}) => parseSessionEvent(JSON.stringify({ type, data: { sessionID: "ses_a", ...data } }))?.kind;
    expect(kind("session.next.step.ended", { finish: "stop" })).toBe("end");
    expect(kind("session.next.step.ended", { finish: "tool-calls" })).toBe("progress");
    expect(kind("session.next.step.failed")).toBe("end");
    expect(kind("session.status", { status: { type: "idle" } })).toBe("end");
    expect(kind("permission.v2.asked")).toBe("ask");
    expect(kind("question.v2.asked")).toBe("ask");
    expect(kind("session.next.text.delta")).toBe("progress");
    expect(kind("session.next.prompted")).toBe("start");
    expect(kind("session.next.step.started")).toBe("start");
    expect(kind("session.status", { status: { type: "busy" } })).toBe("start");
    expect(kind("session.next.prompt.admitted")).toBe("progress");
  });

  it("reads the session from durable events and ignores events of no session", () => {
    expect(parseSessionEvent(JSON.stringify({ type: "session.created", durable: { aggregateID: "ses_b" }, data: {} }))).toEqual({ sessionId: "ses_b", kind: "progress" });
    expect(parseSessionEvent(JSON.stringify({ type: "server.connected", data: {} }))).toBeUndefined();
    expect(parseSessionEvent("{not json")).toBeUndefined();
  });
});

/** A hub over a fake stream: `push` delivers raw SSE text, `end` drops the connection. */
function fakeHub() {
  let push: (text: string) => void = () => undefined;
  let end: () => void = () => undefined;
  let connects = 0;
  const http = {
    stream: (_path: string, signal: AbortSignal, onChunk: (text: string) => void) =>
      new Promise<void>((resolve) => {
        connects++;
        push = onChunk;
        end = resolve;
        signal.addEventListener("abort", () => resolve(), { once: true });
      }),
  } as unknown as OpencodeHttp;
  const hub = new EventHub(http);
  return { hub, push: (t: string) => push(t), end: () => end(), connects: () => connects };
}

describe("EventHub", () => {
  it("wakes a waiting watcher on a turn end, not on plain progress", async () => {
    const { hub, push } = fakeHub();
    const release = hub.hold();
    const events = hub.subscribe("ses_a");
    push(event("server.connected", {}));
    expect(events.live).toBe(true);
    expect(events.liveSince).toBeGreaterThan(0);

    const start = Date.now();
    const waiting = events.wait(5_000, undefined);
    push(event("session.next.text.delta", { sessionID: "ses_a", delta: "hi" }));
    push(event("session.next.step.ended", { sessionID: "ses_b", finish: "stop" }));
    await new Promise((r) => setTimeout(r, 30));
    expect(events.lastEventAt).toBeGreaterThan(0);
    expect(events.lastEndAt).toBe(0);
    // Split mid-line across chunks: the event still arrives whole.
    const end = event("session.next.step.ended", { sessionID: "ses_a", finish: "stop" });
    push(end.slice(0, 20));
    push(end.slice(20));
    await waiting;
    expect(Date.now() - start).toBeLessThan(1_000);
    expect(events.lastEndAt).toBeGreaterThan(0);
    expect(events.wakeAt).toBe(events.lastEndAt);
    events.close();
    release();
  });

  it("records permission requests and wakes on them", async () => {
    const { hub, push } = fakeHub();
    const events = hub.subscribe("ses_a");
    push(event("server.connected", {}));
    const waiting = events.wait(5_000, undefined);
    push(event("permission.v2.asked", { id: "per_1", sessionID: "ses_a", action: "bash" }));
    await waiting;
    expect(events.lastAskAt).toBeGreaterThan(0);
    events.close();
  });

  it("stays open while held, closes with the last user, and reports a dropped stream", async () => {
    const { hub, push, end, connects } = fakeHub();
    const release = hub.hold();
    await hub.whenLive(20); // not live yet: gives up after the wait
    const events = hub.subscribe("ses_a");
    events.close();
    expect(connects()).toBe(1);
    push(event("server.connected", {}));
    const again = hub.subscribe("ses_a");
    expect(again.live).toBe(true);
    const waiting = again.wait(5_000, undefined);
    end();
    await waiting; // the drop wakes the watcher, which then polls without events
    expect(again.live).toBe(false);
    again.close();
    release();
    expect(hub.live).toBe(false);
  });
});
