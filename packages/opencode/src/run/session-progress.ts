import type { SessionMessage } from "../api/api-schemas.ts";
import { messageCost, NO_PRICES, type ModelPrices } from "./model-prices.ts";

/** What a live session has done so far, for a job's progress (O6). */
export interface SessionProgress {
  /** Name of the newest tool call, null before the first. */
  lastTool: string | null;
  /** input + output + reasoning over the session's assistant messages. */
  tokens: number;
  /** USD: opencode's figure, or the tokens at the configured price (see `messageCost`). */
  costUsd: number;
  /** Assistant messages seen (one per model step). */
  steps: number;
}

/**
 * Sums a session's assistant messages and finds its newest tool call. Messages may come in any
 * order; the newest is the one created last.
 */
export function summarizeSessionProgress(messages: readonly SessionMessage[], prices: ModelPrices = NO_PRICES): SessionProgress {
  const assistants = messages
    .filter((m) => m.type === "assistant")
    .sort((a, b) => a.time.created - b.time.created);
  let tokens = 0;
  let costUsd = 0;
  let lastTool: string | null = null;
  for (const m of assistants) {
    tokens += (m.tokens?.input ?? 0) + (m.tokens?.output ?? 0) + (m.tokens?.reasoning ?? 0);
    costUsd += messageCost(m, prices);
    for (const part of m.content ?? []) {
      const name = part.name ?? (part as { tool?: unknown }).tool;
      if (part.type === "tool" && typeof name === "string" && name.length > 0) lastTool = name;
    }
  }
  return { lastTool, tokens, costUsd, steps: assistants.length };
}
