import type { SessionMessage } from "../api/api-schemas.ts";
import type { OpencodeApi } from "../api/opencode-api.ts";
import { OpencodeContractError } from "../errors/opencode-contract.error.ts";
import type { ActivePoller } from "./active-poller.ts";
import { CompletionTracker, newMessagesSince } from "./completion-tracker.ts";
import { decidePermission, defaultAnswers, type AgentPolicy } from "./permission-policy.ts";
import { QuestionPolicyError } from "../errors/question-policy.error.ts";
import { nextPollDelay } from "./poll-schedule.ts";
import { fetchAlongside, needsMessages, needsPendingCheck, quietCheckDue, stillSettingUp, type PollState } from "./poll-plan.ts";
import type { SessionEvents } from "./event-hub.ts";
import { untilDeadline } from "./deadline.ts";
import { PromptTakenUp } from "./prompt-taken-up.ts";

export type TurnResult =
  | { kind: "done"; messages: SessionMessage[] }
  | { kind: "silent"; messages: SessionMessage[] }
  | { kind: "halted"; messages: SessionMessage[]; detail: string }
  /** `dueAt`: when the timeout was due (the run's stop budget counts from there, not from noticing it). */
  | { kind: "timeout"; which: "idle" | "hard"; dueAt: number; messages: SessionMessage[] }
  | { kind: "cancelled"; messages: SessionMessage[] };

export interface TurnWatchOptions {
  api: OpencodeApi;
  activePoller: ActivePoller;
  /** The session's events, subscribed before the prompt was sent (so none of this turn is missed). */
  events: SessionEvents;
  sessionId: string;
  /** Id of the admitted user message: the turn's messages are the ones after it. */
  admittedId: string;
  /** Epoch ms just before the prompt was sent. */
  promptSentAt: number;
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
/** How long a timed-out turn may spend reading its partial answer. */
const FINAL_FETCH_CAP_MS = 500;
const SETTING_UP = { kind: "waiting", progressed: false, confirming: false } as const;

/** Watches one admitted prompt until it completes, goes silent, times out or is cancelled. */
export async function watchTurn(o: TurnWatchOptions): Promise<TurnResult> {
  const now = o.now ?? Date.now;
  const hint = o.events;
  const admitAt = now();
  const tracker = new CompletionTracker();
  // Without a live event stream, whether opencode took the prompt up is read from its history.
  const takenUp = new PromptTakenUp(o.api, o.sessionId, o.admittedId);
  let historySaysBegun = false;
  const progressEveryMs = Math.min(2_000, Math.max(50, Math.floor(o.idleTimeoutMs / 3)));
  let lastActivity = admitAt;
  let lastObservation = 0;
  let lastFetch = 0;
  let lastPendingCheck = o.promptSentAt;
  // Events received by a connection that was live since this instant cover the turn.
  let syncedAt = o.promptSentAt;
  let started = false;
  let assistants: SessionMessage[] = [];
  let confirming = false;
  let pageSize = SMALL_PAGE;
  let errors = 0;
  let halting = 0;
  /** A poll already saw some of the turn's messages (only then is a change seen "now"). */
  let seenBefore = false;
  /** Why the turn may stop unfinished (a question the policy rejected). */
  const stops: string[] = [];

  /** Every request of the watch ends by the nearer of the hard and idle deadlines, or the caller's abort. */
  const bounded = () => untilDeadline(o.signal, Math.min(o.hardDeadline, lastActivity + o.idleTimeoutMs), now());
  const fetchTurn = async (signal: AbortSignal | undefined): Promise<SessionMessage[]> => {
    lastFetch = now();
    let page = newMessagesSince(await o.api.messages(o.sessionId, pageSize, signal), o.admittedId);
    if (!page.complete && pageSize < FULL_PAGE) {
      pageSize = FULL_PAGE; // a long tool-using turn: read more from now on
      page = newMessagesSince(await o.api.messages(o.sessionId, pageSize, signal), o.admittedId);
    }
    return page.messages.filter((m) => m.type === "assistant");
  };
  const timedOut = async (which: "idle" | "hard"): Promise<TurnResult> => {
    const dueAt = which === "hard" ? o.hardDeadline : lastActivity + o.idleTimeoutMs;
    // With trusted events nothing was fetched while the turn ran: take the partial answer and
    // usage for the trace, but never hold a timeout up for long (the interrupt still has to follow).
    assistants = await fetchTurn(untilDeadline(o.signal, now() + FINAL_FETCH_CAP_MS, now())).catch(() => assistants);
    return { kind: "timeout", which, dueAt, messages: assistants };
  };
  const state = (): PollState => {
    const trusted = hint.live && hint.liveSince <= syncedAt;
    return {
      now: now(),
      admitAt,
      trusted,
      resync: hint.live && !trusted,
      started,
      confirming,
      lastObservation,
      lastFetch,
      lastActivity,
      lastEventAt: hint.lastEventAt,
      lastEndAt: hint.lastEndAt,
      begun: started || historySaysBegun || hint.lastStartAt > 0,
      lastAskAt: hint.lastAskAt,
      lastPendingCheck,
      progressEveryMs,
      idleTimeoutMs: o.idleTimeoutMs,
    };
  };

  for (;;) {
    if (o.signal?.aborted) return { kind: "cancelled", messages: assistants };
    lastActivity = Math.max(lastActivity, hint.lastEventAt);
    const s = state();
    if (s.now >= o.hardDeadline) return timedOut("hard");
    if (s.now - lastActivity >= o.idleTimeoutMs) return timedOut("idle");
    const signal = bounded();
    try {
      // The observation must postdate the latest wake-up, or it may predate what woke us.
      const snapshotting = o.activePoller.snapshotAfter(Math.max(lastObservation, hint.wakeAt), signal);
      const early = fetchAlongside(s) ? fetchTurn(signal) : undefined;
      const [snapshot, earlyFetched] = await Promise.all([snapshotting, early]);
      lastObservation = snapshot.startedAt;
      const active = snapshot.ids.has(o.sessionId);
      if (active) started = true;
      const quietCheck = quietCheckDue(s);
      let fetched = earlyFetched;
      if (!fetched && needsMessages(s, active)) fetched = await fetchTurn(signal);
      if (fetched) {
        assistants = fetched;
        if (fetched.length > 0) started = true;
      }
      const settingUp = !fetched && !active && stillSettingUp(s);
      // Idle with nothing to show and no word from the stream that the prompt was taken up: ask the history.
      if (!s.trusted && !s.begun && !active && fetched?.length === 0) historySaysBegun = await takenUp.check(signal);
      const begun = started || historySaysBegun || hint.lastStartAt > 0;
      // The stream covered the whole turn and announced its end: one observation confirms it.
      const ended = s.trusted && s.lastEndAt > 0;
      const decision = settingUp ? SETTING_UP : tracker.observe(active, fetched, now(), begun, ended);
      if (decision.kind === "done") return { kind: "done", messages: decision.messages };
      if (decision.kind === "silent") return { kind: "silent", messages: assistants };
      if (decision.kind === "halted") return { kind: "halted", messages: decision.messages, detail: haltDetail(decision.messages, stops) };
      if (decision.progressed) {
        // The first look at the turn is not progress "now": it may be stale by a whole poll
        // interval. Count it from opencode's own stamps; later changes from when they were seen.
        lastActivity = seenBefore ? now() : Math.max(lastActivity, latestStamp(assistants));
        seenBefore = true;
      }
      // Without trusted events a streaming part grows unseen (its text shows once it ends): a
      // running session with an open text part is the model answering, so it counts as progress.
      if (fetched && !s.trusted && active && CompletionTracker.partStreaming(fetched)) lastActivity = now();
      confirming = decision.confirming;
      halting = "halting" in decision ? (decision.halting ?? 0) : 0;
      if (s.resync) syncedAt = s.now;
      if (needsPendingCheck(s, active, CompletionTracker.toolPending(assistants), quietCheck)) {
        lastPendingCheck = now();
        await answerPending(o, stops, signal);
      }
      errors = 0;
    } catch (err) {
      if (o.signal?.aborted) return { kind: "cancelled", messages: assistants };
      if (signal?.aborted) continue; // a deadline passed mid-request: the loop's top says which
      if (err instanceof OpencodeContractError || err instanceof QuestionPolicyError || ++errors >= MAX_POLL_ERRORS) throw err;
      o.onNotice("opencode poll failed, retrying", { sessionId: o.sessionId, error: (err as Error).message });
    }
    const next = state();
    const sinceActivityMs = next.now - (next.trusted ? next.lastEndAt : lastActivity);
    const delay = nextPollDelay({ sinceActivityMs, confirming, eventsLive: next.trusted, idleTimeoutMs: o.idleTimeoutMs, started, begun: next.begun, halting });
    await hint.wait(Math.min(delay, Math.max(1, o.hardDeadline - next.now)), o.signal);
  }
}

/** Answers every pending permission request and question from the policy, so nothing waits on a human. */
async function answerPending(o: TurnWatchOptions, stops: string[], signal: AbortSignal | undefined): Promise<void> {
  const [permissions, questions] = await Promise.all([o.api.permissions(o.sessionId, signal), o.api.questions(o.sessionId, signal)]);
  for (const request of permissions) {
    const decision = decidePermission(o.policy, request);
    o.onNotice(`permission ${request.action} → ${decision.reply}`, { sessionId: o.sessionId, resources: request.resources });
    await o.api.replyPermission(o.sessionId, request.id, decision.reply, decision.message, signal);
  }
  for (const request of questions) {
    const asked = request.questions.map((q) => q.question);
    let answers: string[][] | undefined;
    try {
      answers = (o.policy.answerQuestion ?? defaultAnswers)(request);
    } catch (err) {
      // Nobody may wait on the question: reject it (which stops the turn), then report the throw.
      await o.api.rejectQuestion(o.sessionId, request.id, signal).catch(() => undefined);
      throw new QuestionPolicyError(o.sessionId, asked.join(" / "), err);
    }
    o.onNotice(`question ${answers ? "answered" : "rejected"}`, { sessionId: o.sessionId, questions: asked });
    if (answers) await o.api.replyQuestion(o.sessionId, request.id, answers, signal);
    else {
      stops.push(`the policy rejected the question "${asked.join(" / ").slice(0, 120)}"`);
      await o.api.rejectQuestion(o.sessionId, request.id, signal);
    }
  }
}

/** The newest time opencode stamped on the turn's messages (creation or completion). */
function latestStamp(messages: SessionMessage[]): number {
  return Math.max(0, ...messages.map((m) => Math.max(m.time.created, m.time.completed ?? 0)));
}

/** Why a halted turn stopped: what the client knows (a rejected question), else the last tool's state. */
function haltDetail(messages: SessionMessage[], stops: string[]): string {
  if (stops.length) return stops.join("; ");
  const tool = messages.at(-1)?.content?.findLast((p) => p.type === "tool");
  return tool ? `its last tool call${tool.name ? ` (${tool.name})` : ""} is ${tool.state?.status ?? "unfinished"}` : "its newest message has no finish, completion time or error";
}
