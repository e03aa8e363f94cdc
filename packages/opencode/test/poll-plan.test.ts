import { describe, expect, it } from "vitest";
import type { OpencodeApi } from "../src/api/opencode-api.ts";
import { LocationWarmup } from "../src/run/location-warmup.ts";
import { fetchAlongside, needsMessages, needsPendingCheck, quietCheckDue, type PollState } from "../src/run/poll-plan.ts";
import { nextPollDelay } from "../src/run/poll-schedule.ts";

/** A trusted-events watcher 3 s into a running turn, with nothing special going on. */
const base = (over: Partial<PollState> = {}): PollState => ({
  now: 13_000,
  admitAt: 10_000,
  trusted: true,
  resync: false,
  started: true,
  begun: true,
  confirming: false,
  lastObservation: 12_000,
  lastFetch: 0,
  lastActivity: 12_500,
  lastEventAt: 12_500,
  lastEndAt: 0,
  lastAskAt: 0,
  lastPendingCheck: 10_000,
  progressEveryMs: 2_000,
  idleTimeoutMs: 600_000,
  ...over,
});

describe("poll plan with trusted events", () => {
  it("reads no messages and lists no permissions while a turn runs and nothing is pending", () => {
    const s = base();
    expect(needsMessages(s, true)).toBe(false);
    expect(needsPendingCheck(s, true, true, quietCheckDue(s))).toBe(false);
    expect(fetchAlongside(s)).toBe(false);
  });

  it("answers at once when a permission or question event arrived", () => {
    expect(needsPendingCheck(base({ lastAskAt: 12_900 }), true, false, false)).toBe(true);
  });

  it("looks at the messages after a long quiet, and for pending requests if a tool waits", () => {
    const s = base({ now: 20_000, lastEventAt: 12_500, lastActivity: 12_500 });
    expect(quietCheckDue(s)).toBe(true);
    expect(needsMessages(s, true)).toBe(true);
    expect(needsPendingCheck(s, true, true, true)).toBe(true);
    expect(needsPendingCheck(s, true, false, true)).toBe(false);
  });

  it("looks for a missed request well before a short idle timeout", () => {
    const s = base({ now: 14_600, idleTimeoutMs: 3_000 });
    expect(quietCheckDue(s)).toBe(true);
    expect(quietCheckDue({ ...s, idleTimeoutMs: 600_000 })).toBe(false);
  });

  it("resyncs after the stream came up late: messages and pending requests", () => {
    const s = base({ trusted: false, resync: true });
    expect(needsMessages(s, true)).toBe(true);
    expect(needsPendingCheck(s, true, true, false)).toBe(true);
  });

  it("reads messages with the snapshot right after a turn-end event or when confirming", () => {
    expect(fetchAlongside(base({ lastEndAt: 12_600 }))).toBe(true);
    expect(fetchAlongside(base({ confirming: true }))).toBe(true);
  });

  it("reads no messages of a prompt opencode has not taken up, however long it queues; once taken up it looks", () => {
    expect(needsMessages(base({ started: false, begun: false, now: 10_400 }), false)).toBe(false);
    expect(needsMessages(base({ started: false, begun: false, now: 40_000 }), false)).toBe(false);
    expect(needsMessages(base({ started: false, begun: true, now: 10_400 }), false)).toBe(true);
    expect(needsMessages(base({ started: false, begun: false, now: 10_400, lastEndAt: 10_300 }), false)).toBe(true);
    expect(needsMessages(base(), false)).toBe(true);
  });
});

describe("poll plan without events", () => {
  it("polls messages and pending requests like a plain poller", () => {
    const s = base({ trusted: false, lastFetch: 10_500, lastPendingCheck: 12_000 });
    expect(needsMessages(s, true)).toBe(true);
    expect(needsMessages(base({ trusted: false, lastFetch: 12_900 }), true)).toBe(false);
    expect(needsPendingCheck(s, true, true, false)).toBe(true);
    expect(needsPendingCheck(base({ trusted: false, lastPendingCheck: 12_800 }), true, true, false)).toBe(false);
  });
});

describe("nextPollDelay with trusted events", () => {
  const live = { confirming: false, eventsLive: true, idleTimeoutMs: 600_000 };
  it("is a slow safety net once running, brisk right after a turn end", () => {
    expect(nextPollDelay({ ...live, sinceActivityMs: 10_000, started: true })).toBeGreaterThanOrEqual(2_000);
    expect(nextPollDelay({ ...live, sinceActivityMs: 50, started: true })).toBeLessThanOrEqual(50);
  });

  it("waits for opencode's word on a queued prompt, then polls briskly until it is seen running (or silent)", () => {
    expect(nextPollDelay({ ...live, sinceActivityMs: 10_000, started: false, begun: false })).toBe(2_000);
    expect(nextPollDelay({ ...live, sinceActivityMs: 10_000, started: false, begun: true })).toBe(100);
  });
});

describe("LocationWarmup", () => {
  it("shares one model listing between concurrent first runs in a directory, then caches it", async () => {
    let calls = 0;
    const api = {
      models: async () => {
        calls++;
        await new Promise((r) => setTimeout(r, 20));
        return calls < 2 ? [] : [{ id: "scripted", providerID: "fake" }];
      },
    } as unknown as OpencodeApi;
    const warmup = new LocationWarmup(api);
    await Promise.all([warmup.ready("/a", undefined), warmup.ready("/a", undefined), warmup.ready("/a", undefined), warmup.ready("/a", undefined)]);
    expect(calls).toBe(2); // one listing while booting, one ready — not four of each
    await warmup.ready("/a", undefined);
    expect(calls).toBe(2);
  });

  it("waits for the run's provider in the directory, reading the model list only to tell booting from missing", { timeout: 10_000 }, async () => {
    const seen: string[] = [];
    let booted = false;
    const api = {
      hasProvider: async (_dir: string, provider: string) => {
        seen.push(`provider ${provider}`);
        return booted && provider === "fake";
      },
      models: async () => {
        seen.push("models");
        const listed = booted ? [{ id: "scripted", providerID: "fake" }] : [];
        booted = true; // the next look finds the location booted
        return listed;
      },
    } as unknown as OpencodeApi;
    const warmup = new LocationWarmup(api);
    await warmup.ready("/c", "fake");
    expect(seen).toEqual(["provider fake", "models", "provider fake"]);
    await warmup.ready("/c", "fake");
    expect(seen).toHaveLength(3); // cached

    // A booted location without the provider: no endless wait (the prompt's silence will say
    // why), and the expensive model list is read once, not on every look.
    seen.length = 0;
    const started = Date.now();
    await warmup.ready("/c", "nope");
    expect(Date.now() - started).toBeGreaterThanOrEqual(3_000);
    expect(seen.filter((x) => x === "models")).toEqual(["models"]);
    expect(seen.filter((x) => x === "provider nope").length).toBeGreaterThan(2);
  });

  it("lets a caller abort its own wait without failing the others", async () => {
    const api = {
      models: async () => {
        await new Promise((r) => setTimeout(r, 50));
        return [{ id: "m", providerID: "p" }];
      },
    } as unknown as OpencodeApi;
    const warmup = new LocationWarmup(api);
    const controller = new AbortController();
    const mine = warmup.ready("/b", undefined, controller.signal);
    const other = warmup.ready("/b", undefined);
    controller.abort(new Error("caller gave up"));
    await expect(mine).rejects.toThrow("caller gave up");
    await expect(other).resolves.toBeUndefined();
  });
});
