import { z } from "zod";
import type { SessionMessage } from "../api/api-schemas.ts";

/** USD per million tokens, as opencode's config writes a model's `cost`. */
export interface ModelPrice {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** Prices by `provider/model`. */
export type ModelPrices = ReadonlyMap<string, ModelPrice>;

export const NO_PRICES: ModelPrices = new Map();

const price = z.number().finite().nonnegative().optional();
const costSchema = z.looseObject({ input: price, output: price, cache_read: price, cache_write: price });
const entries = z.record(z.string(), z.unknown());

/**
 * The prices of the models the server's configuration defines (`provider.<id>.models.<id>.cost`).
 * An entry that does not parse is left out, never the whole list.
 */
export function pricesFromConfig(config: unknown): ModelPrices {
  const out = new Map<string, ModelPrice>();
  const providers = entries.safeParse((config as { provider?: unknown } | null)?.provider);
  for (const [providerId, provider] of Object.entries(providers.data ?? {})) {
    const models = entries.safeParse((provider as { models?: unknown } | null)?.models);
    for (const [modelId, model] of Object.entries(models.data ?? {})) {
      const cost = costSchema.safeParse((model as { cost?: unknown } | null)?.cost);
      if (!cost.success) continue;
      out.set(`${providerId}/${modelId}`, {
        input: cost.data.input ?? 0,
        output: cost.data.output ?? 0,
        cacheRead: cost.data.cache_read ?? 0,
        cacheWrite: cost.data.cache_write ?? 0,
      });
    }
  }
  return out;
}

/**
 * What one assistant message cost. opencode's own figure when it has one; otherwise its tokens
 * at the configured price of the model that answered. opencode 1.18.33 reports `cost: 0` for
 * every model a config file defines, price or not (it prices only catalogue models), so a
 * self-hosted or proxied model would spend nothing and no budget could stop it. Reasoning
 * tokens are priced as output, as opencode does.
 */
export function messageCost(message: SessionMessage, prices: ModelPrices): number {
  if (message.cost !== undefined && message.cost > 0) return message.cost;
  const model = message.model;
  const p = model ? prices.get(`${model.providerID}/${model.id}`) : undefined;
  const t = message.tokens;
  if (!p || !t) return message.cost ?? 0;
  const perToken =
    (t.input ?? 0) * p.input +
    ((t.output ?? 0) + (t.reasoning ?? 0)) * p.output +
    (t.cache?.read ?? 0) * p.cacheRead +
    (t.cache?.write ?? 0) * p.cacheWrite;
  return perToken / 1_000_000;
}

/**
 * One server's prices, read from its configuration on first use and kept. A failed read prices
 * nothing this time and is tried again on the next use.
 */
export class ServerPrices {
  private known: Promise<ModelPrices> | undefined;

  constructor(private readonly readConfig: (signal?: AbortSignal) => Promise<unknown>) {}

  async get(signal?: AbortSignal): Promise<ModelPrices> {
    this.known ??= this.readConfig(signal).then(pricesFromConfig);
    try {
      return await this.known;
    } catch {
      this.known = undefined;
      return NO_PRICES;
    }
  }
}
