/**
 * What one `/api/event` payload means to a run watcher:
 * - "start": opencode took the prompt up (prompted, a step started, status busy) → from now on a
 *   session that is idle with nothing to show is silent, not still queued;
 * - "end": the turn probably just ended (final step ended or failed, session error/idle) → confirm now;
 * - "ask": a permission request or question waits for an answer → answer now;
 * - "progress": anything else about the session (text deltas, tool steps) → resets the idle timeout only.
 */
export type EventKind = "start" | "end" | "ask" | "progress";

export interface SessionEvent {
  sessionId: string;
  kind: EventKind;
}

const START_TYPES = new Set(["session.next.prompted", "session.next.step.started"]);
const ASK_TYPES = new Set(["permission.v2.asked", "permission.asked", "question.v2.asked", "question.asked"]);
// A rejected question stops the turn without any step or idle event (opencode 1.18.33).
const END_TYPES = new Set(["session.next.step.failed", "session.error", "session.idle", "question.v2.rejected", "question.rejected"]);

interface RawEvent {
  type?: unknown;
  data?: { sessionID?: unknown; finish?: unknown; status?: { type?: unknown } };
  durable?: { aggregateID?: unknown };
}

/** Parses one SSE `data:` payload; undefined for events that name no session (or unparsable ones). */
export function parseSessionEvent(json: string): SessionEvent | undefined {
  let event: RawEvent;
  try {
    event = JSON.parse(json) as RawEvent;
  } catch {
    return undefined;
  }
  const id = event.data?.sessionID ?? event.durable?.aggregateID;
  if (typeof id !== "string") return undefined;
  return { sessionId: id, kind: kindOf(event) };
}

function kindOf(event: RawEvent): EventKind {
  const type = typeof event.type === "string" ? event.type : "";
  if (ASK_TYPES.has(type)) return "ask";
  if (START_TYPES.has(type)) return "start";
  if (type === "session.status" && event.data?.status?.type === "busy") return "start";
  if (END_TYPES.has(type)) return "end";
  // A step that ends in tool calls continues the turn; any other finish (stop, length, error) ends it.
  if (type === "session.next.step.ended") return event.data?.finish === "tool-calls" ? "progress" : "end";
  if (type === "session.status" && event.data?.status?.type === "idle") return "end";
  return "progress";
}
