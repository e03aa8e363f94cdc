import { createLogger } from "@ratatoskr/runtime";
import { describe, expect, it, vi } from "vitest";
import { TelegramPoller, type UpdateSource } from "../src/telegram/delivery/telegram-poller.ts";
import { capturedLogger } from "./support/captured-logger.ts";

const logger = createLogger({ service: "test", level: "silent" });
type Call = { offset: number; timeoutSec: number; limit?: number };

/** Answers getUpdates from a script; an exhausted script holds the poll until aborted. */
function scriptedSource(script: Array<Array<{ update_id: number }> | Error>) {
  const calls: Call[] = [];
  const source: UpdateSource = {
    getUpdates: (params, signal) => {
      calls.push(params);
      const next = params.timeoutSec === 0 ? [] : script.shift();
      if (next instanceof Error) return Promise.reject(next);
      if (next) return Promise.resolve(next);
      return new Promise((_resolve, reject) =>
        signal.addEventListener("abort", () => reject(new Error("aborted"))),
      );
    },
  };
  return { source, calls };
}

describe("TelegramPoller", () => {
  it("confirms a batch only after handling it, and confirms the last one on stop", async () => {
    const { source, calls } = scriptedSource([[{ update_id: 5 }, { update_id: 6 }], [{ update_id: 7 }]]);
    const handled: number[][] = [];
    const poller = new TelegramPoller({
      source,
      logger,
      onBatch: async (updates) => {
        handled.push(updates.map((u) => u.update_id));
      },
    });
    poller.start();
    await vi.waitFor(() => expect(calls).toHaveLength(3));
    await poller.stop();
    expect(handled).toEqual([[5, 6], [7]]);
    expect(calls.map((c) => c.offset)).toEqual([0, 7, 8, 8]);
    expect(calls.at(-1)).toEqual({ offset: 8, timeoutSec: 0, limit: 1 });
  });

  it("stops within its deadline when Telegram does not answer the confirming call", async () => {
    const source: UpdateSource = {
      getUpdates: (params, signal) =>
        params.offset === 0
          ? Promise.resolve([{ update_id: 1 }])
          : new Promise((_resolve, reject) =>
              signal.addEventListener("abort", () => reject(new Error("aborted"))),
            ),
    };
    const handled: number[] = [];
    const poller = new TelegramPoller({
      source,
      logger,
      confirmTimeoutMs: 200,
      onBatch: async (updates) => {
        handled.push(...updates.map((u) => u.update_id));
      },
    });
    poller.start();
    await vi.waitFor(() => expect(handled).toEqual([1]));
    const stopping = Date.now();
    await poller.stop();
    expect(Date.now() - stopping).toBeLessThan(2_000);
  });

  it("keeps polling after a failure (e.g. 409 while another poller runs out)", async () => {
    const { source, calls } = scriptedSource([new Error("409: Conflict"), [{ update_id: 1 }]]);
    const handled: number[] = [];
    const poller = new TelegramPoller({
      source,
      logger,
      retryDelayMs: 1,
      onBatch: async (updates) => {
        handled.push(...updates.map((u) => u.update_id));
      },
    });
    poller.start();
    await vi.waitFor(() => expect(handled).toEqual([1]));
    await poller.stop();
    expect(calls[0]?.offset).toBe(0);
    expect(calls[1]?.offset).toBe(0);
  });

  it("tells a Telegram outage when it starts and when it ends, not at every failed poll", async () => {
    const down = Array.from({ length: 6 }, () => new Error("connect ETIMEDOUT 149.154.167.220:443"));
    const { source } = scriptedSource([...down, [{ update_id: 1 }]]);
    const { logger: captured, lines } = capturedLogger();
    const handled: number[] = [];
    const poller = new TelegramPoller({
      source,
      logger: captured,
      retryDelayMs: 1,
      onBatch: async (updates) => {
        handled.push(...updates.map((u) => u.update_id));
      },
    });
    poller.start();
    await vi.waitFor(() => expect(handled).toEqual([1]));
    await poller.stop();
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ["warn", "telegram getUpdates unreachable; retrying"],
      ["info", "telegram getUpdates reachable again"],
    ]);
    expect(lines[0]).toMatchObject({ err: { message: "connect ETIMEDOUT 149.154.167.220:443" } });
    expect(lines[1]).toMatchObject({ failures: 6 });
  });

  it("tells an outage of the update store (Postgres) the same way, as its own", async () => {
    const source: UpdateSource = {
      getUpdates: (params, signal) =>
        params.offset === 0 || params.timeoutSec === 0
          ? Promise.resolve(params.offset === 0 ? [{ update_id: 1 }] : [])
          : new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(new Error("aborted")))),
    };
    const { logger: captured, lines } = capturedLogger();
    let attempts = 0;
    const poller = new TelegramPoller({
      source,
      logger: captured,
      retryDelayMs: 1,
      maxRetryDelayMs: 4,
      onBatch: async () => {
        if (++attempts <= 4) throw new Error("connect ECONNREFUSED 127.0.0.1:5432");
      },
    });
    poller.start();
    await vi.waitFor(() => expect(lines.map((l) => l.msg)).toContain("telegram update store reachable again"));
    await poller.stop();
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ["warn", "telegram update store unreachable; retrying"],
      ["info", "telegram update store reachable again"],
    ]);
    expect(lines[1]).toMatchObject({ failures: 4 });
  });
});
