import type { TaskEffect } from "./task-effects.ts";
import type { TaskEventType } from "./task-events.ts";
import type { TaskSnapshot } from "./task-snapshot.ts";
import type { TaskStatus } from "./task-status.ts";

/** Why a transition was refused; each maps to a specific reply for the person. */
export type RefusalReason =
  | "already-approved"
  | "not-ready"
  | "not-approved"
  | "not-retryable"
  | "not-continuable"
  | "nothing-to-cancel"
  /** Continue (+budget) / Stop of a task that is not paused (a second press, a stale button). */
  | "not-paused"
  | "turn-limit"
  | "finished"
  | "wrong-source"
  /** A conditional write (a sweep's repair) found the task changed since it looked: nothing written. */
  | "moved-on"
  | "illegal";

export type TransitionResult =
  | { ok: true; task: TaskSnapshot; effects: TaskEffect[] }
  | { ok: false; refusal: IllegalTransition };

export interface IllegalTransition {
  reason: RefusalReason;
  from: TaskStatus;
  event: TaskEventType;
}

export class IllegalTransitionError extends Error {
  override readonly name = "IllegalTransitionError";
  constructor(readonly refusal: IllegalTransition) {
    super(`task in status "${refusal.from}" cannot take "${refusal.event}" (${refusal.reason})`);
  }
}

export function refuse(task: TaskSnapshot, event: TaskEventType, reason: RefusalReason): TransitionResult {
  return { ok: false, refusal: { reason, from: task.status, event } };
}
