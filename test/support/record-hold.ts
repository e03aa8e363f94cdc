import pg from "pg";

/** How often the hold looks for a write waiting on it. */
const POLL_MS = 50;

export interface RecordHold {
  /** Resolves once a process waits to write the task's row (it is recording what it did): the worst moment to die. */
  taken(timeoutMs?: number): Promise<void>;
  /**
   * Ends the writes `taken` saw waiting (the killed process never made them) and lets the row go.
   * Call it after the recording process was killed.
   */
  release(): Promise<void>;
}

/**
 * Holds a task's row locked, as push-hold holds a push: every record of the task (a transition,
 * a postmortem message) waits on it, after the effect it records was made (the model run
 * finished, its trace written). A test kills the recording process in between — the effect
 * happened, the process never recorded it. Postgres would still carry out a statement its dead
 * client sent before dying, so `release` ends the waiting sessions first: the write is never made,
 * as when the process dies a moment sooner.
 */
export async function holdTaskRecords(db: { connectionString: string; schema: string }, taskId: number): Promise<RecordHold> {
  const client = new pg.Client({ connectionString: db.connectionString, options: `-c search_path=${db.schema}` });
  await client.connect();
  const pid = Number((await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid);
  await client.query("BEGIN");
  // Transitions and message inserts wait on this; the run's trace (a child row) does not.
  const locked = await client.query("SELECT id FROM tasks WHERE id = $1 FOR NO KEY UPDATE", [taskId]);
  if (locked.rowCount !== 1) throw new Error(`task ${taskId} does not exist`);
  const waiting = async () => {
    // Inside the hold's transaction pg_stat_activity is read once and kept: without clearing it, a
    // process that connected since (a restarted one recording its retry) would never be seen.
    await client.query("SELECT pg_stat_clear_snapshot()");
    return (await client.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))", [pid])).rows.map((r) => r.pid);
  };
  // The sessions that were waiting when the hold was taken: the recording process's.
  let held: number[] = [];
  return {
    async taken(timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      while ((held = await waiting()).length === 0) {
        if (Date.now() > deadline) throw new Error(`nothing tried to write task ${taskId} within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    },
    async release() {
      for (const blocked of held) await client.query("SELECT pg_terminate_backend($1)", [blocked]);
      await client.query("ROLLBACK");
      await client.end();
    },
  };
}
