import type { Redis } from "@ratatoskr/runtime";

/** What each running process says about itself; `/status` lists these. */
export interface ServiceHeartbeat {
  name: string;
  version: string;
  pid: number;
  host: string;
  startedAt: string;
  seenAt: string;
}

const HEARTBEAT_INTERVAL_MS = 10_000;
/** A process not seen for three intervals is considered gone. */
const STALE_AFTER_MS = 3 * HEARTBEAT_INTERVAL_MS;

function heartbeatKey(prefix: string): string {
  return `${prefix}:service-heartbeats`;
}

function fieldOf(beat: Pick<ServiceHeartbeat, "name" | "host" | "pid">): string {
  return `${beat.name}@${beat.host}:${beat.pid}`;
}

/** Publishes this process's heartbeat until the returned stop function runs. Ephemeral state only. */
export function startHeartbeat(
  redis: Redis,
  prefix: string,
  beat: Omit<ServiceHeartbeat, "seenAt">,
  intervalMs = HEARTBEAT_INTERVAL_MS,
): () => Promise<void> {
  const key = heartbeatKey(prefix);
  const write = () =>
    redis
      .hset(key, fieldOf(beat), JSON.stringify({ ...beat, seenAt: new Date().toISOString() }))
      .catch(() => {
        // Redis blips are reported by the connection's own error listener; the next beat retries.
      });
  void write();
  const timer = setInterval(write, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await redis.hdel(key, fieldOf(beat)).catch(() => undefined);
  };
}

/** Live processes, newest first per service name; stale entries are pruned. */
export async function readServiceHeartbeats(
  redis: Redis,
  prefix: string,
  now = Date.now(),
): Promise<ServiceHeartbeat[]> {
  const key = heartbeatKey(prefix);
  const raw = await redis.hgetall(key);
  const live: ServiceHeartbeat[] = [];
  const stale: string[] = [];
  for (const [field, value] of Object.entries(raw)) {
    const beat = JSON.parse(value) as ServiceHeartbeat;
    if (now - Date.parse(beat.seenAt) > STALE_AFTER_MS) stale.push(field);
    else live.push(beat);
  }
  if (stale.length) await redis.hdel(key, ...stale);
  return live.sort((a, b) => a.name.localeCompare(b.name) || b.seenAt.localeCompare(a.seenAt));
}
