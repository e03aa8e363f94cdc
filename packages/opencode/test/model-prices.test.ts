import { describe, expect, it } from "vitest";
import type { SessionMessage } from "../src/api/api-schemas.ts";
import { messageCost, NO_PRICES, pricesFromConfig, ServerPrices } from "../src/run/model-prices.ts";

const config = {
  provider: {
    local: { models: { coder: { cost: { input: 2, output: 10, cache_read: 0.5, cache_write: 4 } }, free: {} } },
    broken: { models: "not a map" },
  },
};

function assistant(over: Partial<SessionMessage>): SessionMessage {
  return { id: "m", type: "assistant", time: { created: 1 }, model: { providerID: "local", id: "coder" }, ...over } as SessionMessage;
}

describe("model prices", () => {
  it("reads the prices of the models a configuration defines, skipping entries that do not parse", () => {
    const prices = pricesFromConfig(config);
    expect([...prices.keys()]).toEqual(["local/coder"]);
    expect(prices.get("local/coder")).toEqual({ input: 2, output: 10, cacheRead: 0.5, cacheWrite: 4 });
    expect(pricesFromConfig({ provider: { x: { models: { y: { cost: { input: -1 } } } } } }).size).toBe(0);
    expect(pricesFromConfig(null).size).toBe(0);
  });

  it("prices a message's tokens when opencode reports no cost, reasoning as output", () => {
    const tokens = { input: 1_000, output: 200, reasoning: 100, cache: { read: 2_000, write: 500 } };
    const usd = messageCost(assistant({ cost: 0, tokens }), pricesFromConfig(config));
    expect(usd).toBeCloseTo((1_000 * 2 + 300 * 10 + 2_000 * 0.5 + 500 * 4) / 1e6, 12);
  });

  it("keeps opencode's own figure, and prices nothing it has no price for", () => {
    const prices = pricesFromConfig(config);
    const tokens = { input: 1_000, output: 200, reasoning: 0 };
    expect(messageCost(assistant({ cost: 0.5, tokens }), prices)).toBe(0.5);
    expect(messageCost(assistant({ cost: 0, tokens, model: { providerID: "local", id: "free" } }), prices)).toBe(0);
    expect(messageCost(assistant({ cost: 0, tokens }), NO_PRICES)).toBe(0);
  });

  it("reads a server's prices once, and again after a failed read", async () => {
    let reads = 0;
    let fail = true;
    const prices = new ServerPrices(async () => {
      reads++;
      if (fail) throw new Error("server down");
      return config;
    });
    expect((await prices.get()).size).toBe(0);
    fail = false;
    expect((await prices.get()).size).toBe(1);
    expect((await prices.get()).size).toBe(1);
    expect(reads).toBe(2);
  });
});
