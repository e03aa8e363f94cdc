import type { SessionMessage } from "../api/api-schemas.ts";
import type { OpencodeApi } from "../api/opencode-api.ts";
import { OpencodeContractError } from "../errors/opencode-contract.error.ts";
import type { ActivePoller } from "./active-poller.ts";
import { CompletionTracker, newMessagesSince } from "./completion-tracker.ts";
import { decidePermission, type AgentPolicy } from "./permission-policy.ts";
import { nextPollDelay } from "./poll-schedule.ts";
import type { EventHub } from "./event-hub.ts";

export type TurnResult =
  | { kind: "done"; messages: SessionMessage[] }
  | { kind: "silent"; messages: SessionMessage[] }
  | { kind: "timeout"; which: "idle" | "hard"; messages: SessionMessage[] }
  | { kind: "cancelled"; messages: SessionMessage[] };

export interface TurnWatchOptions {
  api: OpencodeApi;
  activePoller: ActivePoller;
  events: EventHub;
  sessionId: string;
  /** Id of the admitted user message: the turn's messages are the ones after it. */
  admittedId: string;
  policy: AgentPolicy;
  idleTimeoutMs: number;
  /** Epoch ms at which the run's hard timeout fires. */
  hardDeadline: number;
  signal: AbortSignal | undefined;
  onNotice: (message: string, data: Record<string, unknown>) => void;
  now?: () => number;
}

const SMALL_PAGE = 20;
const FULL_PAGE = 200;
/** Consecutive failed polls tolerated (server blips) before the turn fails. */
const MAX_POLL_ERRORS = 5;

/** Watches one admitted prompt until it completes, goes silent, times out or is cancelled. */
export async function watchTurn(o: TurnWatchOptions): Promise<TurnResult> {
  const now = o.now ?? Date.now;
  const admitAt = now();
  const tracker = new CompletionTracker(admitAt);
  const hint = o.events.subscribe(o.sessionId);
  let lastActivity = admitAt;
  let lastObservation = 0;
  let lastFetch = 0;
  let lastPermissionCheck = 0;
  let assistants: SessionMessage[] = [];
  let confirming = false;
  let pageSize = SMALL_PAGE;
  let errors = 0;
  const progressEvery = Math.min(2_000, Math.max(50, Math.floor(o.idleTimeoutMs / 3)));

  const fetchTurn = async (): Promise<SessionMessage[]> => {
    let page = newMessagesSince(await o.api.messages(o.sessionId, pageSize, o.signal), o.admittedId);
    if (!page.complete && pageSize < FULL_PAGE) {
      pageSize = FULL_PAGE; // a long tool-using turn: read more from now on
      page = newMessagesSince(await o.api.messages(o.sessionId, pageSize, o.signal), o.admittedId);
    }
    return page.messages.filter((m) => m.type === "assistant");
  };

  try {
    for (;;) {
      if (o.signal?.aborted) return { kind: "cancelled", messages: assistants };
      const t = now();
      lastActivity = Math.max(lastActivity, hint.lastEventAt);
      if (t >= o.hardDeadline) return { kind: "timeout", which: "hard", messages: assistants };
      if (t - lastActivity >= o.idleTimeoutMs) return { kind: "timeout", which: "idle", messages: assistants };
      try {
        const snapshot = await o.activePoller.snapshotAfter(lastObservation);
        lastObservation = snapshot.startedAt;
        const active = snapshot.ids.has(o.sessionId);
        const eventSinceFetch = hint.lastEventAt > lastFetch;
        const fetchNow = !active || t - lastFetch >= (eventSinceFetch ? 400 : progressEvery);
        let fetched: SessionMessage[] | undefined;
        if (fetchNow) {
          lastFetch = now();
          fetched = await fetchTurn();
          assistants = fetched;
        }
        const decision = tracker.observe(active, fetched, now());
        if (decision.kind === "done") return { kind: "done", messages: decision.messages };
        if (decision.kind === "silent") return { kind: "silent", messages: assistants };
        if (decision.progressed) lastActivity = now();
        confirming = decision.confirming;
        if (active && CompletionTracker.toolPending(assistants) && now() - lastPermissionCheck >= 500) {
          lastPermissionCheck = now();
          await answerPending(o);
        }
        errors = 0;
      } catch (err) {
        if (o.signal?.aborted) return { kind: "cancelled", messages: assistants };
        if (err instanceof OpencodeContractError || ++errors >= MAX_POLL_ERRORS) throw err;
        o.onNotice("opencode poll failed, retrying", { sessionId: o.sessionId, error: (err as Error).message });
      }
      const delay = nextPollDelay({ sinceActivityMs: now() - lastActivity, confirming, eventsLive: hint.live, idleTimeoutMs: o.idleTimeoutMs });
      await hint.wait(Math.min(delay, Math.max(1, o.hardDeadline - now())), o.signal);
    }
  } finally {
    hint.close();
  }
}

/** Answers every pending permission request and question from the policy, so nothing waits on a human. */
async function answerPending(o: TurnWatchOptions): Promise<void> {
  const [permissions, questions] = await Promise.all([o.api.permissions(o.sessionId, o.signal), o.api.questions(o.sessionId, o.signal)]);
  for (const request of permissions) {
    const decision = decidePermission(o.policy, request);
    o.onNotice(`permission ${request.action} → ${decision.reply}`, { sessionId: o.sessionId, resources: request.resources });
    await o.api.replyPermission(o.sessionId, request.id, decision.reply, decision.message, o.signal);
  }
  for (const request of questions) {
    const answers = o.policy.answerQuestion?.(request);
    o.onNotice(`question ${answers ? "answered" : "rejected"}`, { sessionId: o.sessionId, questions: request.questions.map((q) => q.question) });
    if (answers) await o.api.replyQuestion(o.sessionId, request.id, answers, o.signal);
    else await o.api.rejectQuestion(o.sessionId, request.id, o.signal);
  }
}
