import type { SessionMessage } from "../api/api-schemas.ts";
import { formatModelRef } from "../model/model-ref.ts";
import { isFinalStep, isFinished } from "./completion-tracker.ts";
import { NO_PRICES, type ModelPrices } from "./model-prices.ts";
import type { TokenUsage } from "./run-types.ts";
import { addUsage, answeringModel, emptyUsage, textOf } from "./turn-summary.ts";

/** A turn a session finished while no run watched it: what a run reading it to its end reports. */
export interface FinishedTurn {
  output: string;
  tokens: TokenUsage;
  /** USD: opencode's figure, or the tokens at the configured price. */
  cost: number;
  /** "provider/model" that answered. */
  model: string | undefined;
  endedAt: Date;
}

/**
 * The turn `prompt` started in a session, read from its latest messages (newest first), when it
 * ended on its own: after the newest user message asking exactly `prompt`, the newest assistant
 * message (a repair prompt's answer included) ended the turn's last step without an error.
 * Undefined while it runs, when it ended in an error or was cut short, or when the prompt is not
 * among the messages read.
 */
export function finishedTurnOf(
  newestFirst: readonly SessionMessage[],
  prompt: string,
  prices: ModelPrices = NO_PRICES,
): FinishedTurn | undefined {
  const asked = newestFirst.findIndex((m) => m.type === "user" && m.text === prompt);
  if (asked < 0) return undefined;
  const turn = newestFirst
    .slice(0, asked)
    .filter((m) => m.type === "assistant")
    .reverse();
  const last = turn.at(-1);
  if (!last || last.error !== undefined || !isFinished(last) || !isFinalStep(last)) return undefined;
  const tokens = emptyUsage();
  const cost = addUsage(tokens, turn, prices);
  const endedAt = new Date(last.time.completed ?? last.time.created);
  return { output: textOf(turn), tokens, cost, model: formatModelRef(answeringModel(turn)), endedAt };
}
