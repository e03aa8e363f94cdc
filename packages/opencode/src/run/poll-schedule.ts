export interface ScheduleInput {
  /**
   * ms since the last sign that the turn may be ending: with trusted events, the last "turn ended"
   * event; without them, any activity (admit, visible progress).
   */
  sinceActivityMs: number;
  /** The last poll saw "not active" and is waiting for a confirming poll. */
  confirming: boolean;
  /** The event stream covers this turn: it wakes the watcher when the turn ends or asks something. */
  eventsLive: boolean;
  idleTimeoutMs: number;
  /** False until the session was seen running or answering (default true). */
  started?: boolean;
  /** opencode took the prompt up (default true): a session taken up but not seen running may be silent. */
  begun?: boolean;
  /** Consecutive polls that saw the session idle with its newest message unfinished (0 = none). */
  halting?: number;
}

/**
 * Delay before the next poll (ms). With trusted events the poll is a slow safety net — the end
 * event wakes the watcher at once — except right after that event (the session may need a few ms
 * to go idle) and between opencode taking the prompt up (its event wakes the watcher) and the
 * session being seen running: a silent session must be noticed fast, so that gap is polled briskly.
 * Without events: quick right after activity, backing off while a long turn runs quietly.
 */
export function nextPollDelay(input: ScheduleInput): number {
  let delay: number;
  // A halted turn is confirmed with backed-off polls (50, 100, 200, 400 ms), never hammered.
  if (input.halting) delay = Math.min(400, 50 * 2 ** (input.halting - 1));
  else if (input.confirming) delay = 25;
  else if (input.eventsLive) {
    if (input.sinceActivityMs < 400) delay = 50;
    else if (input.started === false && input.begun !== false) delay = 100;
    else delay = 2_000;
  } else if (input.sinceActivityMs < 400) delay = 30;
  else if (input.sinceActivityMs < 1_500) delay = 100;
  else if (input.sinceActivityMs < 5_000) delay = 250;
  else delay = 500;
  return Math.max(10, Math.min(delay, Math.floor(input.idleTimeoutMs / 4)));
}

/**
 * With trusted events, how long the session may stay quiet before a safety-net look at its
 * messages (a pending tool whose permission event was missed): 5 s, then growing with the
 * quiet up to 10 s.
 */
export function quietCheckEvery(quietMs: number): number {
  return Math.min(10_000, Math.max(5_000, quietMs));
}
