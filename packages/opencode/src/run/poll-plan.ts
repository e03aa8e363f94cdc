import { quietCheckEvery } from "./poll-schedule.ts";

/** What one watcher knows at the start of a poll. Times are epoch ms, 0 = never. */
export interface PollState {
  now: number;
  admitAt: number;
  /** The event stream covers the whole turn (it was live before the prompt or the last resync). */
  trusted: boolean;
  /** The stream is live but came up after the prompt (or reconnected): events may have been missed. */
  resync: boolean;
  /** Seen running or answering at least once. */
  started: boolean;
  /** opencode took the prompt up (started, or its stream or history said "prompted"). */
  begun: boolean;
  /** The previous poll saw "not active + finished" and this one confirms it. */
  confirming: boolean;
  lastObservation: number;
  lastFetch: number;
  lastActivity: number;
  lastEventAt: number;
  lastEndAt: number;
  lastAskAt: number;
  lastPendingCheck: number;
  /** Without trusted events, how often a running session's messages are read for progress. */
  progressEveryMs: number;
  idleTimeoutMs: number;
}

/** Without trusted events, how often a running tool's session is checked for pending requests. */
const FALLBACK_PENDING_EVERY = 500;

/**
 * Read the messages together with the active snapshot when this poll most likely finds the session
 * idle — one round trip instead of two on a busy server. Safe: completion still needs two
 * consecutive identical "not active + finished" observations, each sent after the previous returned.
 */
export function fetchAlongside(s: PollState): boolean {
  return s.confirming || s.lastEndAt > s.lastObservation;
}

/** Whether this poll reads the session's messages, given what the snapshot said. */
export function needsMessages(s: PollState, active: boolean): boolean {
  if (s.resync) return true;
  if (!s.trusted) return !active || s.now - s.lastFetch >= (s.lastEventAt > s.lastFetch ? 400 : s.progressEveryMs);
  if (!active) return !stillSettingUp(s);
  return quietCheckDue(s);
}

/**
 * The stream covers the turn and says opencode has not taken the prompt up yet (nor ended it): it
 * is still queued (a busy server takes seconds), so there is nothing to read — however long it takes.
 */
export function stillSettingUp(s: PollState): boolean {
  return s.trusted && !s.begun && s.lastEndAt === 0;
}

/**
 * Trusted events but a long quiet: look at the messages in case a request's event was missed —
 * well before the idle timeout, which a request nobody answered would otherwise run into.
 */
export function quietCheckDue(s: PollState): boolean {
  const every = Math.min(quietCheckEvery(s.now - s.lastActivity), s.idleTimeoutMs / 2);
  return s.trusted && s.now - Math.max(s.lastFetch, s.lastEventAt, s.admitAt) >= every;
}

/**
 * Whether to list pending permission requests and questions. An "asked" event always triggers it;
 * otherwise only a running session whose newest message waits on a tool — with trusted events
 * just on a quiet check or a resync, without them every FALLBACK_PENDING_EVERY ms.
 */
export function needsPendingCheck(s: PollState, active: boolean, toolWaits: boolean, quietCheck: boolean): boolean {
  if (s.lastAskAt > s.lastPendingCheck) return true;
  if (!active || !toolWaits) return false;
  return s.trusted ? quietCheck || s.resync : s.now - s.lastPendingCheck >= FALLBACK_PENDING_EVERY;
}
