import type { OpencodeApi } from "../api/opencode-api.ts";
import { AgentMessageError } from "../errors/agent-message.error.ts";
import { SilentSessionError } from "../errors/silent-session.error.ts";
import { HaltedTurnError } from "../errors/halted-turn.error.ts";
import { VerdictValidationError } from "../errors/verdict-validation.error.ts";
import { formatModelRef, sameModel, type ModelRef } from "../model/model-ref.ts";
import type { ActivePoller } from "./active-poller.ts";
import type { EventHub } from "./event-hub.ts";
import type { AgentRunResult, RunAgentOptions, RunOutcome } from "./run-types.ts";
import { addUsage, answeringModel, classifyProviderFailure, emptyUsage, messageError, textOf } from "./turn-summary.ts";
import { ProviderError } from "../errors/provider.error.ts";
import { watchTurn, type TurnResult } from "./turn-watcher.ts";
import { newMessagesSince } from "./completion-tracker.ts";
import type { SessionMessage } from "../api/api-schemas.ts";
import { extractVerdict, repairPrompt } from "./verdict-extract.ts";
import type { LocationWarmup } from "./location-warmup.ts";
import { NO_PRICES, type ServerPrices } from "./model-prices.ts";
import type { PromptGate } from "../pool/prompt-gate.ts";
import { RunStoppedError } from "../errors/run-stopped.error.ts";
import { PromptQueueTimeoutError } from "../errors/prompt-queue-timeout.error.ts";
import { describeInterrupt, INTERRUPT_CAP_MS, interruptWithin } from "./interrupt.ts";
import { prepareResume } from "./session-resume.ts";
import { untilDeadline } from "./deadline.ts";

/** Messages read for a cut turn's usage: a long tool-using turn fits. */
const CUT_TURN_PAGE = 200;

export interface OpencodeLogger {
  warn(data: Record<string, unknown>, message: string): void;
  debug?(data: Record<string, unknown>, message: string): void;
}

export interface AgentRunDeps {
  api: OpencodeApi;
  activePoller: ActivePoller;
  events: EventHub;
  warmup: LocationWarmup;
  /** The server's cap on concurrent runs; the run holds a slot from start to end. */
  gate?: PromptGate;
  /** Prices for the models opencode reports no cost for; none: opencode's figures only. */
  prices?: ServerPrices;
  logger: OpencodeLogger | undefined;
  /** Told the session id as soon as it is known (pool affinity). */
  rememberSession?: (sessionId: string) => void;
  resolveModel: (requested: RunAgentOptions["model"]) => Promise<ModelRef | undefined>;
  now?: () => number;
}

/** One agent run: session, prompt, watch, verdict (+ one repair), trace. Never throws; failures are results. */
export async function runAgent<T>(deps: AgentRunDeps, o: RunAgentOptions<T>): Promise<AgentRunResult<T>> {
  const now = deps.now ?? Date.now;
  const startedAt = new Date(now());
  const hardDeadline = startedAt.getTime() + o.hardTimeoutMs;
  const serverUrl = deps.api.http.baseUrl;
  const warnings: string[] = [];
  const tokens = emptyUsage();
  let cost = 0;
  let sessionId = o.sessionId;
  let expected: ModelRef | undefined;
  let actual: ModelRef | undefined;
  let output = "";
  let verdict: T | undefined;
  let outcome = "failed" as RunOutcome;
  let error: Error | undefined;
  let timeoutKind: "idle" | "hard" | undefined;
  /** When the timeout was due, if the turn watcher said so (an idle one is noticed a little later). */
  let timeoutDueAt: number | undefined;
  let repaired = false;
  let resumed = false;
  /** Why a timeout or cancel happened (the interrupt's outcome is added at the end). */
  let stopReason: string | undefined;
  const warn = (message: string, data: Record<string, unknown> = {}) => {
    warnings.push(message);
    deps.logger?.warn({ sessionId, agent: o.agent, serverUrl, ...data }, message);
  };

  /** The caller's signal, also aborting at the hard deadline: every request of the run uses it. */
  const bounded = () => untilDeadline(o.signal, hardDeadline, now());
  /**
   * Creating the session and admitting a prompt wait for a stalled (busy) server up to the run's
   * hard deadline, not the client's shorter request timeout: failing then would only leave a
   * session or an admitted prompt behind for a retried job to duplicate.
   */
  const untilHard = () => Math.max(1, hardDeadline - now());
  /** What the run was waiting for when the hard deadline passed mid-request. */
  let step = "the run to start";

  /** The turn a caller's stop cut short: its usage is counted once its messages are read again. */
  let cutTurn: { admittedId: string; messages: SessionMessage[] } | undefined;
  const runTurn = async (text: string): Promise<TurnResult> => {
    // Subscribed before the prompt is sent, so no event of the turn can slip past.
    const events = deps.events.subscribe(sessionId as string);
    let turn: TurnResult;
    let admittedId: string;
    try {
      const promptSentAt = now();
      const admitted = await deps.api.prompt(sessionId as string, text, bounded(), untilHard());
      admittedId = admitted.id;
      turn = await watchTurn({
        api: deps.api,
        activePoller: deps.activePoller,
        events,
        sessionId: sessionId as string,
        admittedId: admitted.id,
        promptSentAt,
        policy: o.policy,
        idleTimeoutMs: o.idleTimeoutMs,
        hardDeadline,
        signal: o.signal,
        onNotice: (message, data) => deps.logger?.debug?.({ agent: o.agent, ...data }, message),
        now,
      });
    } finally {
      events.close();
    }
    // A cancelled turn's messages may be a poll old: they are read again, beside the interrupt.
    if (turn.kind === "cancelled") cutTurn = { admittedId, messages: turn.messages };
    else cost += addUsage(tokens, turn.messages, (await deps.prices?.get(o.signal)) ?? NO_PRICES);
    const turnText = textOf(turn.messages);
    output = output && turnText ? `${output}\n${turnText}` : output || turnText;
    actual = answeringModel(turn.messages) ?? actual;
    return turn;
  };

  // The event stream opens now, so it is usually live before the prompt (else the turn must resync).
  let releaseEvents = () => {};
  let releaseSlot = () => {};
  try {
    // Where the time before the prompt goes (a queue for a slot, a fresh directory's warm-up…).
    const timings: Record<string, number> = {};
    let mark = now();
    const lap = (name: string) => {
      const at = now();
      timings[name] = at - mark;
      mark = at;
    };
    step = "a free prompt slot on the server";
    if (deps.gate) releaseSlot = await deps.gate.acquire(o.signal, hardDeadline);
    lap("slotMs");
    releaseEvents = deps.events.hold();
    expected = await deps.resolveModel(o.model);
    step = "the server to load the directory's models";
    await deps.warmup.ready(o.directory, expected?.providerID, bounded(), hardDeadline);
    lap("warmupMs");
    if (sessionId) {
      step = `session ${sessionId} to be ready for a new prompt`;
      resumed = await prepareResume({ api: deps.api, activePoller: deps.activePoller, now }, sessionId, bounded(), (m) => warn(m));
      if (!resumed) sessionId = undefined;
    }
    if (!sessionId) {
      step = "the server to create the session";
      const session = await deps.api.createSession({ agent: o.agent, directory: o.directory, ...(expected ? { model: expected } : {}) }, bounded(), untilHard());
      sessionId = session.id;
    }
    lap("sessionMs");
    deps.rememberSession?.(sessionId);
    await o.onSession?.({ sessionId, serverUrl });
    await deps.events.whenLive(250);
    if (!deps.events.live) {
      warn(
        `opencode's event stream (${serverUrl}/api/event) is not live: a streaming answer's text is seen only when its part ends, so an open part of a running session counts as progress and a model that stalls mid-answer is cut by the hard timeout (${o.hardTimeoutMs} ms), not the idle timeout (${o.idleTimeoutMs} ms)`,
      );
    }
    lap("eventsMs");
    deps.logger?.debug?.({ sessionId, agent: o.agent, serverUrl, ...timings }, "agent run prompting");
    step = "the server to admit the prompt";
    let turn = await runTurn(o.prompt);
    let settled = await settle(turn);
    if (!settled && o.schema) {
      let extracted = extractVerdict(textOf(turn.messages), o.schema);
      if (!extracted.ok) {
        repaired = true;
        deps.logger?.debug?.({ sessionId, problem: extracted.problem }, "verdict invalid, sending repair prompt");
        turn = await runTurn(repairPrompt(extracted.problem));
        settled = await settle(turn);
        if (!settled) extracted = extractVerdict(textOf(turn.messages), o.schema);
      }
      if (!settled) {
        if (extracted.ok) verdict = extracted.value;
        else throw new VerdictValidationError(extracted.problem, output);
      }
    }
    if (!settled) outcome = "ok";
  } catch (err) {
    if (o.signal?.aborted) {
      outcome = "cancelled";
      stopReason = "run cancelled by the caller";
    } else if (now() >= hardDeadline) {
      outcome = "timeout";
      timeoutKind = "hard";
      stopReason = `hard timeout of ${o.hardTimeoutMs} ms reached while waiting for ${step}`;
    } else if (err instanceof PromptQueueTimeoutError) {
      outcome = "timeout";
      timeoutKind = "hard";
      stopReason = `hard timeout of ${o.hardTimeoutMs} ms reached before the run started: ${err.message}`;
    } else {
      outcome = "failed";
      error = err instanceof Error ? err : new Error(String(err));
    }
  } finally {
    releaseEvents();
    releaseSlot();
  }

  if (outcome === "timeout" || outcome === "cancelled") {
    const reason = outcome === "cancelled" ? "cancelled" : (timeoutKind ?? "hard");
    const text = stopReason ?? "run stopped";
    if (sessionId) {
      // Timeout or cancel included, the run returns within INTERRUPT_CAP_MS of its deadline or abort.
      const stopAt = outcome === "timeout" ? Math.min(now(), timeoutDueAt ?? hardDeadline) : now();
      const capMs = Math.max(500, stopAt + INTERRUPT_CAP_MS - now());
      const [interrupted, cutMessages] = await Promise.all([interruptWithin(deps.api, sessionId, capMs), rereadCutTurn(capMs)]);
      if (cutMessages) cost += addUsage(tokens, cutMessages, (await deps.prices?.get(untilDeadline(undefined, now() + capMs, now()))) ?? NO_PRICES);
      if (!interrupted.ok) warn(`could not interrupt session ${sessionId}: ${interrupted.error.message}`);
      error = new RunStoppedError(reason, sessionId, interrupted.ok, `${text}; ${describeInterrupt(sessionId, interrupted)}`);
    } else error = new RunStoppedError(reason, undefined, false, text);
  }
  if (expected && actual && !sameModel(expected, actual)) {
    warn(`model mismatch: session ${sessionId} was answered by ${formatModelRef(actual)}, pinned ${formatModelRef(expected)}`, {
      expected: formatModelRef(expected),
      actual: formatModelRef(actual),
    });
  }
  const endedAt = new Date(now());
  return {
    outcome,
    sessionId,
    serverUrl,
    output,
    verdict,
    error,
    timeoutKind,
    expectedModel: formatModelRef(expected),
    actualModel: formatModelRef(actual),
    warnings,
    repaired,
    resumed,
    trace: {
      sessionId,
      serverUrl,
      agent: o.agent,
      model: formatModelRef(actual ?? expected),
      tokens,
      cost,
      startedAt,
      endedAt,
      outcome,
      prompt: o.prompt,
      output,
      error: error?.message,
    },
  };

  /** What the cut turn did, read fresh (its last poll may predate its finished steps); the poll's view if the server does not answer in time. */
  async function rereadCutTurn(capMs: number): Promise<SessionMessage[] | undefined> {
    if (!cutTurn || !sessionId) return undefined;
    const { admittedId, messages } = cutTurn;
    const fresh = await deps.api
      .messages(sessionId, CUT_TURN_PAGE, untilDeadline(undefined, now() + capMs, now()))
      .then((page) => newMessagesSince(page, admittedId).messages.filter((m) => m.type === "assistant"))
      .catch(() => undefined);
    return fresh && fresh.length >= messages.length ? fresh : messages;
  }

  /** Maps a non-"done" turn (or a done turn that ended in an error) to the run's outcome; false = go on. */
  async function settle(turn: TurnResult): Promise<boolean> {
    const id = sessionId as string;
    switch (turn.kind) {
      case "cancelled":
        outcome = "cancelled";
        stopReason = "run cancelled by the caller";
        return true;
      case "timeout":
        outcome = "timeout";
        timeoutKind = turn.which;
        timeoutDueAt = turn.dueAt;
        stopReason = turn.which === "idle" ? `no progress for ${o.idleTimeoutMs} ms (idle timeout)` : `hard timeout of ${o.hardTimeoutMs} ms reached`;
        return true;
      case "silent": {
        deps.warmup.forget(o.directory, expected?.providerID); // a restarted server lost the location: warm it again next time
        const name = formatModelRef(expected);
        // Why, if the server can say so within a moment: the pinned model is not in its list.
        const models = expected ? await deps.api.models(o.directory, untilDeadline(o.signal, now() + 2_000, now())).catch(() => []) : [];
        const missing = expected && models.length && !models.some((m) => sameModel(m, expected as ModelRef));
        throw new SilentSessionError(id, serverUrl, name, missing ? `The server lists no model ${name} for ${o.directory}.` : "");
      }
      case "halted":
        throw new HaltedTurnError(id, turn.detail);
      case "done": {
        const failure = messageError(turn.messages);
        if (failure) {
          const provider = classifyProviderFailure(failure);
          if (provider) throw new ProviderError(id, answeringModel(turn.messages)?.providerID ?? expected?.providerID, provider.status, provider.retryable, failure);
          throw new AgentMessageError(id, failure);
        }
        return false;
      }
    }
  }
}
