import { measure, waitForAnswers } from "./probes.ts";
import type { TrialRow } from "./report.ts";
import { sleep, type Trial } from "./trial.ts";
import { CHATS, startWorld, type Shared } from "./world.ts";

/** How long a message may take after the fault is over before it counts as lost (unless the trial says). */
const ANSWER_DEADLINE_MS = 90_000;
const QUIET_MS = 3_000;

/**
 * Runs `rounds` rounds of one trial in a world of its own (its Redis, its Postgres, fresh
 * service processes) and sums what the person would have seen.
 */
export async function runTrial(
  trial: Trial,
  rounds: number,
  shared: Shared,
  log: (line: string) => void,
): Promise<TrialRow> {
  const row: TrialRow = {
    trial: trial.name,
    fault: trial.fault,
    runs: 0,
    messages: 0,
    lost: 0,
    duplicated: 0,
    stuck: 0,
    recoveryMs: undefined,
    warnLines: {},
  };
  const world = await startWorld(shared, trial.name, trial.world);
  let chat = 0;
  const ctx = {
    world,
    model: shared.model,
    trial: trial.name,
    nextChat: () => CHATS[chat++ % CHATS.length]!,
  };
  try {
    for (let round = 1; round <= rounds; round++) {
      const { probes, healedAt } = await trial.round(ctx);
      await waitForAnswers(probes, healedAt + (trial.answerDeadlineMs ?? ANSWER_DEADLINE_MS));
      await sleep(trial.settleMs ?? QUIET_MS);
      const outcome = await measure(probes);
      row.runs += 1;
      row.messages += outcome.probes;
      row.lost += outcome.lost;
      row.duplicated += outcome.duplicated;
      row.stuck += outcome.stuck;
      if (outcome.lastAnsweredAt !== undefined) {
        const recovery = Math.max(0, outcome.lastAnsweredAt - healedAt);
        row.recoveryMs = Math.max(row.recoveryMs ?? 0, recovery);
      }
      const verdict = outcome.details.length === 0 ? "ok" : outcome.details.join("; ");
      log(`${trial.name} round ${round}/${rounds}: ${verdict}`);
    }
  } catch (err) {
    row.error = err instanceof Error ? err.message : String(err);
    log(`${trial.name}: ${row.error}`);
  } finally {
    row.warnLines = world.warnLines();
    await world.close();
  }
  return row;
}
