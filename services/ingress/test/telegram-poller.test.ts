import { createLogger } from "@ratatoskr/runtime";
import { describe, expect, it, vi } from "vitest";
import { TelegramPoller, type UpdateSource } from "../src/telegram/delivery/telegram-poller.ts";

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
});
