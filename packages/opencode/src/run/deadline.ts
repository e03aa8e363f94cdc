/** Longest timer Node accepts (ms); a deadline further away is no deadline for one request. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The caller's `signal` combined with a timeout firing at `deadline` (epoch ms), for one request:
 * a frozen server must never hold a run past its deadline, nor a cancel for longer than it takes
 * to notice the abort.
 */
export function untilDeadline(signal: AbortSignal | undefined, deadline: number, now: number = Date.now()): AbortSignal | undefined {
  const ms = deadline - now;
  if (!(ms < MAX_TIMER_MS)) return signal;
  const cap = AbortSignal.timeout(Math.max(1, Math.ceil(ms)));
  return signal ? AbortSignal.any([signal, cap]) : cap;
}
