import { describe, expect, it } from "vitest";
import { CompletionTracker, newMessagesSince } from "../src/run/completion-tracker.ts";
import { ActivePoller } from "../src/run/active-poller.ts";
import { nextPollDelay } from "../src/run/poll-schedule.ts";
import type { SessionMessage } from "../src/api/api-schemas.ts";

const assistant = (id: string, text: string, completed?: number): SessionMessage => ({
  id,
  type: "assistant",
  time: { created: 1, ...(completed ? { completed } : {}) },
  content: [{ type: "text", text }],
  ...(completed ? { finish: "stop" } : {}),
});

describe("halt confirmation schedule", () => {
  it("backs off 50, 100, 200, 400 ms instead of polling every 25 ms", () => {
    const delays = [1, 2, 3, 4, 5].map((halting) => nextPollDelay({ sinceActivityMs: 0, confirming: true, eventsLive: true, idleTimeoutMs: 60_000, halting }));
    expect(delays).toEqual([50, 100, 200, 400, 400]);
  });
});

describe("CompletionTracker", () => {
  it("completes only after two identical not-active finished observations", () => {
    const t = new CompletionTracker();
    expect(t.observe(true, [assistant("m1", "hal")], 10).kind).toBe("waiting");
    expect(t.observe(false, [assistant("m1", "hello", 20)], 20).kind).toBe("waiting");
    expect(t.observe(false, [assistant("m1", "hello", 20)], 30).kind).toBe("done");
  });

  it("completes on one not-active observation of a final step once opencode's stream announced the end", () => {
    const t = new CompletionTracker();
    expect(t.observe(true, [assistant("m1", "hal")], 10, true, true).kind).toBe("waiting");
    expect(t.observe(false, [assistant("m1", "hello", 20)], 20, true, true)).toMatchObject({ kind: "done" });
  });

  it("still confirms twice after the end event when the newest step continues (tool calls) or failed to finish", () => {
    const t = new CompletionTracker();
    const toolStep: SessionMessage = { ...assistant("m1", "", 20), finish: "tool-calls" };
    expect(t.observe(false, [toolStep], 20, true, true).kind).toBe("waiting");
    expect(t.observe(false, [toolStep], 30, true, true).kind).toBe("done");
    const u = new CompletionTracker();
    expect(u.observe(false, [assistant("m1", "half")], 20, true, true).kind).toBe("waiting");
  });

  it("restarts the count when the message changes between polls", () => {
    const t = new CompletionTracker();
    t.observe(false, [assistant("m1", "a", 20)], 20);
    expect(t.observe(false, [assistant("m1", "a", 20), assistant("m2", "b", 30)], 30).kind).toBe("waiting");
    expect(t.observe(false, [assistant("m1", "a", 20), assistant("m2", "b", 30)], 40).kind).toBe("done");
  });

  it("never completes while the session is active", () => {
    const t = new CompletionTracker();
    for (let i = 0; i < 5; i++) expect(t.observe(true, [assistant("m1", "a", 20)], i * 100).kind).toBe("waiting");
  });

  it("reports silence once opencode took the prompt up and stays idle with nothing to show", () => {
    const t = new CompletionTracker();
    expect(t.observe(false, [], 100).kind).toBe("waiting");
    expect(t.observe(false, [], 200, true).kind).toBe("waiting");
    expect(t.observe(false, [], 300, true).kind).toBe("waiting"); // running is marked a moment after "prompted"
    expect(t.observe(false, [], 450, true).kind).toBe("silent");
  });

  it("reports a halted turn: idle, newest message unfinished and unchanged for 4 polls over ≥ 500 ms", () => {
    const t = new CompletionTracker();
    const halted = [assistant("m1", "asking")];
    expect(t.observe(true, halted, 0).kind).toBe("waiting");
    expect(t.observe(false, halted, 100)).toMatchObject({ kind: "waiting", halting: 1 });
    expect(t.observe(false, halted, 150)).toMatchObject({ kind: "waiting", halting: 2 });
    expect(t.observe(false, halted, 250)).toMatchObject({ kind: "waiting", halting: 3 });
    expect(t.observe(false, halted, 450)).toMatchObject({ kind: "waiting", halting: 4 });
    expect(t.observe(false, halted, 850)).toMatchObject({ kind: "halted", messages: halted });
  });

  it("restarts the halt count when the session runs again or the message changes", () => {
    const t = new CompletionTracker();
    t.observe(false, [assistant("m1", "a")], 0);
    t.observe(false, [assistant("m1", "a")], 300);
    expect(t.observe(true, [assistant("m1", "a")], 400).kind).toBe("waiting");
    expect(t.observe(false, [assistant("m1", "ab")], 500)).toMatchObject({ halting: 1 });
    expect(t.observe(false, [assistant("m1", "abc")], 900)).toMatchObject({ halting: 1 });
  });

  it("reports silence from opencode's signal: ran, went idle, nothing new — without waiting on the clock", () => {
    const t = new CompletionTracker();
    expect(t.observe(true, [], 50).kind).toBe("waiting");
    expect(t.observe(false, [], 100).kind).toBe("waiting");
    expect(t.observe(false, [], 150).kind).toBe("silent");
  });

  it("a prompt opencode has not taken up yet is never silent, however long a loaded server takes", () => {
    const t = new CompletionTracker();
    for (const at of [100, 1_000, 3_000, 10_000, 60_000]) expect(t.observe(false, [], at).kind).toBe("waiting");
    expect(t.observe(true, [], 61_000).kind).toBe("waiting");
    expect(t.observe(false, [assistant("m1", "hi", 61_500)], 61_500).kind).toBe("waiting");
    expect(t.observe(false, [assistant("m1", "hi", 61_500)], 61_600).kind).toBe("done");
  });

  it("reports progress when text grows", () => {
    const t = new CompletionTracker();
    t.observe(true, [assistant("m1", "a")], 10);
    expect(t.observe(true, [assistant("m1", "a")], 20)).toMatchObject({ progressed: false });
    expect(t.observe(true, [assistant("m1", "ab")], 30)).toMatchObject({ progressed: true });
  });
});

describe("newMessagesSince", () => {
  it("returns the messages after the admitted one, oldest first", () => {
    const page = [assistant("m3", "c"), assistant("m2", "b"), { id: "u1", type: "user", time: { created: 0 } }, assistant("m0", "old")];
    const r = newMessagesSince(page, "u1");
    expect(r.complete).toBe(true);
    expect(r.messages.map((m) => m.id)).toEqual(["m2", "m3"]);
    expect(newMessagesSince(page.slice(0, 2), "u1").complete).toBe(false);
  });
});

describe("ActivePoller", () => {
  it("serves concurrent callers with one request and re-fetches for a newer observation", async () => {
    let calls = 0;
    let clock = 100;
    const poller = new ActivePoller(async () => {
      calls++;
      await new Promise((r) => setTimeout(r, 5));
      return new Set(["ses_a"]);
    }, () => clock);
    const [a, b, c] = await Promise.all([poller.snapshotAfter(0), poller.snapshotAfter(0), poller.snapshotAfter(50)]);
    expect(calls).toBe(1);
    expect(a).toBe(b);
    expect(c.ids.has("ses_a")).toBe(true);
    clock = 200;
    const next = await poller.snapshotAfter(a.startedAt);
    expect(calls).toBe(2);
    expect(next.startedAt).toBeGreaterThan(a.startedAt);
  });

  it("starts a newer snapshot at once instead of waiting for an older one in flight, at most two at a time", async () => {
    const pending: Array<() => void> = [];
    let clock = 100;
    const poller = new ActivePoller(
      () => new Promise<Set<string>>((resolve) => pending.push(() => resolve(new Set(["ses_a"])))),
      () => clock,
    );
    const old = poller.snapshotAfter(0);
    clock = 200;
    const newer = poller.snapshotAfter(150);
    expect(pending).toHaveLength(2); // the newer one did not wait for the older answer
    clock = 300;
    const newest = poller.snapshotAfter(250);
    await Promise.resolve();
    expect(pending).toHaveLength(2); // no third request while two are in flight
    pending[1]?.();
    expect((await newer).startedAt).toBe(200);
    pending[0]?.();
    expect((await old).startedAt).toBe(100);
    await new Promise((r) => setTimeout(r, 0));
    expect(pending).toHaveLength(3);
    pending[2]?.();
    expect((await newest).startedAt).toBe(300);
  });
});

describe("nextPollDelay", () => {
  it("polls fast after activity and backs off when quiet", () => {
    const base = { confirming: false, eventsLive: true, idleTimeoutMs: 600_000 };
    expect(nextPollDelay({ ...base, sinceActivityMs: 0, confirming: true })).toBeLessThanOrEqual(30);
    expect(nextPollDelay({ ...base, sinceActivityMs: 100, eventsLive: false })).toBeLessThanOrEqual(50);
    expect(nextPollDelay({ ...base, sinceActivityMs: 100 })).toBeLessThanOrEqual(100);
    expect(nextPollDelay({ ...base, sinceActivityMs: 60_000 })).toBeGreaterThanOrEqual(1_000);
    expect(nextPollDelay({ ...base, sinceActivityMs: 60_000, idleTimeoutMs: 800 })).toBeLessThanOrEqual(200);
  });
});

describe("CompletionTracker.partStreaming", () => {
  it("is true while the newest message is unfinished and ends in a text or reasoning part", () => {
    expect(CompletionTracker.partStreaming([assistant("m1", "")])).toBe(true);
    expect(CompletionTracker.partStreaming([{ ...assistant("m1", ""), content: [{ type: "reasoning", text: "" }] }])).toBe(true);
  });

  it("is false for a finished message, a running tool, or no message at all", () => {
    expect(CompletionTracker.partStreaming([assistant("m1", "done", 20)])).toBe(false);
    expect(CompletionTracker.partStreaming([{ ...assistant("m1", ""), content: [{ type: "tool", state: { status: "running" } }] }])).toBe(false);
    expect(CompletionTracker.partStreaming([])).toBe(false);
    expect(CompletionTracker.partStreaming(undefined)).toBe(false);
  });
});
