/** The few Redis calls the heartbeat makes (an ioredis client fits). */
export interface HeartbeatRedis {
  set(key: string, value: string, px: "PX", ms: number): Promise<unknown>;
  set(key: string, value: string, px: "PX", ms: number, nx: "NX"): Promise<unknown>;
  exists(key: string): Promise<number>;
  del(key: string): Promise<number>;
}

/** A running command whose heartbeat is this old has lost the process that ran it. */
export const RUN_HEARTBEAT_TTL_MS = 30_000;
const BEAT_EVERY_MS = 10_000;

export function runHeartbeatKey(prefix: string, taskId: number): string {
  return `${prefix}:gitea-run:${taskId}`;
}

/** Marks one agent job of a command as begun; a second begin of the same job is a replay (G6). */
export function runStartKey(prefix: string, jobId: string): string {
  return `${prefix}:gitea-run-start:${jobId}`;
}

/**
 * While an agent works on a Gitea command, its process keeps this key alive. Intake fails a
 * `running` command whose key expired: the process died mid-turn and the turn is never replayed.
 * `begin` returns false when this job already began once (a worker died and BullMQ handed the
 * job out again): the caller must fail the command instead of running the turn a second time.
 */
export async function beginCommandRun(
  redis: HeartbeatRedis,
  prefix: string,
  taskId: number,
  jobId: string,
): Promise<{ replay: boolean; stop: () => Promise<void> }> {
  const first = await redis.set(
    runStartKey(prefix, jobId),
    String(Date.now()),
    "PX",
    7 * 24 * 3_600_000,
    "NX",
  );
  const key = runHeartbeatKey(prefix, taskId);
  const beat = () => redis.set(key, String(Date.now()), "PX", RUN_HEARTBEAT_TTL_MS).catch(() => undefined);
  await beat();
  const timer = setInterval(() => void beat(), BEAT_EVERY_MS);
  timer.unref();
  return {
    replay: first === null,
    stop: async () => {
      clearInterval(timer);
      await redis.del(key).catch(() => 0);
    },
  };
}
