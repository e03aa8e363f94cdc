import { withCause } from "@ratatoskr/contracts";
import { beginCommandRun, type HeartbeatRedis } from "./command-run-heartbeat.ts";

export interface CommandJobOptions<R = unknown> {
  redis: HeartbeatRedis;
  /** Queue prefix: intake watches the run heartbeat under it (G6). */
  prefix: string;
  taskId: number;
  jobId: string;
  /** The job's abort signal: aborted by shutdown, the job goes back to the queue. */
  signal: AbortSignal;
  /** e.g. `the review of round 2`; used in the reasons given to the person. */
  what: string;
  /** Fails the command with a reason the person reads (a refused transition is the caller's to swallow). */
  fail(reason: string): Promise<unknown>;
  /** On a replay, before failing: interrupt the sessions the dead attempt left running (G6). */
  settleDeadRuns?(): Promise<unknown>;
  /**
   * On a replay, first: go on from what the dead attempt finished (its agent run ended, its push
   * may have landed) without running the agent again; undefined when there is nothing to go on
   * from, and the replay fails as a cut-off turn.
   */
  pickUp?(): Promise<R | undefined>;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The frame of every agent job of a Gitea command: keeps the run heartbeat alive while `body`
 * runs; a job that began before and is back (its process died) goes on from what its dead
 * attempt finished when it can (`pickUp`), else fails the command instead of replaying the turn (G6); any error fails the command with the error named, except
 * a shutdown, which hands the job back (its next attempt is then a replay and fails cleanly).
 */
export async function runCommandJob<R>(
  options: CommandJobOptions<R>,
  body: () => Promise<R>,
): Promise<R | { status: "failed"; reason: string }> {
  const run = await beginCommandRun(options.redis, options.prefix, options.taskId, options.jobId);
  try {
    if (run.replay) {
      const pickedUp = await options.pickUp?.();
      if (pickedUp !== undefined) return pickedUp;
      await options.settleDeadRuns?.().catch(() => undefined);
      await options.fail(`${options.what} was cut off mid-turn (restart or crash); it is not replayed — comment the command again to retry`);
      return { status: "failed", reason: "replay" };
    }
    return await body();
  } catch (err) {
    if (options.signal.aborted) throw err;
    await options.fail(withCause(`${options.what} failed`, messageOf(err)));
    return { status: "failed", reason: messageOf(err) };
  } finally {
    await run.stop();
  }
}
