import { boundedStringify } from "@ratatoskr/runtime";
import type { SessionMessage } from "../api/api-schemas.ts";
import type { ModelRef } from "../model/model-ref.ts";
import { messageCost, type ModelPrices } from "./model-prices.ts";
import type { TokenUsage } from "./run-types.ts";

export function textOf(messages: SessionMessage[]): string {
  return messages
    .flatMap((m) => (m.content ?? []).filter((p) => p.type === "text" && p.text).map((p) => p.text as string))
    .join("\n");
}

export function emptyUsage(): TokenUsage {
  return { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 };
}

/** Adds the messages' tokens to `total`; returns what they cost. */
export function addUsage(total: TokenUsage, messages: SessionMessage[], prices: ModelPrices): number {
  let cost = 0;
  for (const m of messages) {
    total.input += m.tokens?.input ?? 0;
    total.output += m.tokens?.output ?? 0;
    total.reasoning += m.tokens?.reasoning ?? 0;
    total.cacheRead += m.tokens?.cache?.read ?? 0;
    total.cacheWrite += m.tokens?.cache?.write ?? 0;
    cost += messageCost(m, prices);
  }
  return cost;
}

/** The model of the newest message that names one. */
export function answeringModel(messages: SessionMessage[]): ModelRef | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const model = messages[i]?.model;
    if (model) return model;
  }
  return undefined;
}

/** Error text carried by the newest message, if its turn ended in an error. */
export function messageError(messages: SessionMessage[]): string | undefined {
  const error = messages.at(-1)?.error;
  if (error === undefined || error === null) return undefined;
  if (typeof error === "string") return error;
  const e = error as { message?: string; data?: { message?: string }; type?: string; name?: string };
  // The error object is opencode's (or its provider's) to shape: never recursed over unbounded.
  return e.message ?? e.data?.message ?? e.type ?? e.name ?? (boundedStringify(error)?.slice(0, 2_000) ?? "an error nested too deep to show");
}

const PROVIDER_FAILURE = /Provider request failed with HTTP (\d{3})|\b(?:status(?:Code)?|HTTP)\s*:?\s*(\d{3})\b/i;
const NETWORK_FAILURE = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|fetch failed|socket hang up/i;

/** A provider failure in an assistant message's error text: its status and whether retrying can help. */
export function classifyProviderFailure(text: string): { status: number | undefined; retryable: boolean } | undefined {
  const m = PROVIDER_FAILURE.exec(text);
  if (m) {
    const status = Number(m[1] ?? m[2]);
    return { status, retryable: status === 429 || status === 408 || status >= 500 };
  }
  return NETWORK_FAILURE.test(text) ? { status: undefined, retryable: true } : undefined;
}
