import type { Database, Task } from "@ratatoskr/db";

const EARLIER_UNROUTED = `SELECT EXISTS (
  SELECT 1 FROM tasks WHERE source = 'gitea' AND status = 'received' AND target_key = $1 AND id < $2
) AS waiting`;

export interface EarlierCommandsWait {
  /** Give up after this long and answer from what is routed (an earlier command stuck on Gitea). */
  deadlineMs?: number;
  firstPollMs?: number;
  maxPollMs?: number;
}

/**
 * Waits until every command posted on the same issue/PR before `task` has been authorized or
 * refused (G4: commands are taken in the order received). `/agent cancel` and `/agent status`
 * posted right behind a command read the line only once that command is in it, or has been
 * turned away: routed side by side, the cancel found nothing to cancel and the command then ran.
 * Resolves false when the deadline passed first.
 */
export async function earlierCommandsRouted(
  pool: Database["pool"],
  task: Pick<Task, "id" | "targetKey">,
  { deadlineMs = 30_000, firstPollMs = 25, maxPollMs = 500 }: EarlierCommandsWait = {},
): Promise<boolean> {
  const giveUpAt = Date.now() + deadlineMs;
  let pollMs = firstPollMs;
  for (;;) {
    const { rows } = await pool.query<{ waiting: boolean }>({
      name: "rt-gitea-earlier-unrouted",
      text: EARLIER_UNROUTED,
      values: [task.targetKey ?? "", task.id],
    });
    if (!rows[0]?.waiting) return true;
    if (Date.now() >= giveUpAt) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(pollMs, Math.max(0, giveUpAt - Date.now()))));
    pollMs = Math.min(maxPollMs, pollMs * 2);
  }
}
