import type { ScriptedModel } from "@ratatoskr/testkit";
import type { Probe } from "./probes.ts";
import type { World, WorldOptions } from "./world.ts";

export interface RoundContext {
  world: World;
  model: ScriptedModel;
  trial: string;
  /** A chat nobody wrote from yet in this world. */
  nextChat(): number;
}

export interface RoundResult {
  probes: Probe[];
  /** When the fault was over (the kill, the restart, the send): recovery counts from here. */
  healedAt: number;
}

export interface Trial {
  name: string;
  /** What is done, in a few words, for the table. */
  fault: string;
  /** What the trial's world runs beside ingress, analyst and notifier. */
  world?: WorldOptions;
  /** How long to keep watching after the answers, for a late second answer. */
  settleMs?: number;
  /** How long a probe may take after the fault is over before it counts as lost (default 90 s). */
  answerDeadlineMs?: number;
  round(ctx: RoundContext): Promise<RoundResult>;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 50 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 90_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`chaos: timed out waiting until ${what}`);
    await sleep(50);
  }
}
