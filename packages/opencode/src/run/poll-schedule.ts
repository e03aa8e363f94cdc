export interface ScheduleInput {
  /** ms since the last sign of activity (admit, stream event, visible progress). */
  sinceActivityMs: number;
  /** The last poll saw "not active" and is waiting for a confirming poll. */
  confirming: boolean;
  /** The per-session event stream is connected (it wakes us on activity). */
  eventsLive: boolean;
  idleTimeoutMs: number;
}

/**
 * Delay before the next poll (ms): quick right after activity — that is when a turn ends — and
 * backing off while a long turn runs quietly. With the event stream live, the slow poll is only
 * a safety net, since any event wakes the watcher at once.
 */
export function nextPollDelay(input: ScheduleInput): number {
  let delay: number;
  if (input.confirming) delay = 25;
  else if (input.sinceActivityMs < 400) delay = input.eventsLive ? 60 : 30;
  else if (input.sinceActivityMs < 1_500) delay = input.eventsLive ? 300 : 100;
  else if (input.sinceActivityMs < 5_000) delay = input.eventsLive ? 1_000 : 250;
  else delay = input.eventsLive ? 2_000 : 500;
  return Math.max(10, Math.min(delay, Math.floor(input.idleTimeoutMs / 4)));
}
