import type { SessionMessage } from "../api/api-schemas.ts";

export type TrackerDecision =
  | { kind: "waiting"; progressed: boolean; confirming: boolean; /** consecutive "not active + unfinished" polls */ halting?: number }
  | { kind: "done"; messages: SessionMessage[] }
  | { kind: "silent" }
  | { kind: "halted"; messages: SessionMessage[] };

export interface TrackerOptions {
  /** Consecutive identical "not active + finished" observations needed (default 2). */
  stablePolls?: number;
  /**
   * After opencode said it took the prompt up, how long an idle session with nothing to show must
   * stay so before it is silent (ms, default 250): opencode marks the session running a moment
   * after it announces the prompt.
   */
  silentConfirmMs?: number;
  /** Unchanged "not active + newest unfinished" observations before the turn counts as halted (default 4)… */
  haltPolls?: number;
  /** …spanning at least this long (ms, default 500), so a turn between two steps is not mistaken. */
  haltAfterMs?: number;
}

export function isFinished(m: SessionMessage): boolean {
  return m.time.completed !== undefined || m.finish !== undefined || m.error !== undefined;
}

/** Finishes after which opencode takes another step of the same turn. */
const CONTINUING_FINISHES = new Set(["tool-calls", "unknown"]);

/** The message ended the turn's last step: it failed, or finished for a reason opencode does not continue after. */
export function isFinalStep(m: SessionMessage): boolean {
  return m.error !== undefined || (m.finish !== undefined && !CONTINUING_FINISHES.has(m.finish));
}

/**
 * Pure completion state for one prompt turn. Feed it each poll's observation; it says when the
 * turn is done (not active, newest new assistant message finished, unchanged over consecutive
 * polls), silent (taken up but never ran), halted, or still going and whether real progress happened.
 */
export class CompletionTracker {
  private lastSignature = "";
  private stable = 0;
  private emptyInactive = 0;
  private sawActive = false;
  private begunAt: number | undefined;
  private readonly stablePolls: number;
  private readonly silentConfirmMs: number;
  private readonly haltPolls: number;
  private readonly haltAfterMs: number;
  private unfinishedInactive = 0;
  private unfinishedSince = 0;

  constructor(options: TrackerOptions = {}) {
    this.stablePolls = options.stablePolls ?? 2;
    this.silentConfirmMs = options.silentConfirmMs ?? 250;
    this.haltPolls = options.haltPolls ?? 4;
    this.haltAfterMs = options.haltAfterMs ?? 500;
  }

  /**
   * `assistants`: the turn's new assistant messages, oldest first; undefined when not fetched this
   * poll. `begun`: opencode said it took the prompt up (its prompted / step-started event, or the
   * same in the session's history). Before that the prompt is still queued — a busy server takes
   * seconds — and never silent, however long it takes (the idle and hard timeouts bound it).
   * `ended`: opencode's own event stream, live over the whole turn, announced the turn's end —
   * then one "not active + final step finished" observation is enough (a second source already
   * agrees); otherwise it must hold over `stablePolls` consecutive observations.
   */
  observe(active: boolean, assistants: SessionMessage[] | undefined, now: number, begun = false, ended = false): TrackerDecision {
    if (begun && this.begunAt === undefined) {
      this.begunAt = now;
      this.emptyInactive = 0;
    }
    let progressed = false;
    if (assistants) {
      const signature = signatureOf(assistants);
      progressed = signature !== this.lastSignature;
      if (progressed) this.stable = 0;
      this.lastSignature = signature;
    }
    if (active) {
      this.sawActive = true;
      this.stable = 0;
      this.emptyInactive = 0;
      this.unfinishedInactive = 0;
      return { kind: "waiting", progressed, confirming: false };
    }
    if (!assistants) return { kind: "waiting", progressed, confirming: true };
    const newest = assistants.at(-1);
    if (!newest) {
      // Silent = opencode ran the turn (or took the prompt up) and is idle with nothing to show:
      // a missing model fails this way, with no event of its own.
      if (!this.sawActive && this.begunAt === undefined) return { kind: "waiting", progressed, confirming: false };
      this.emptyInactive++;
      if (this.emptyInactive >= 2 && (this.sawActive || now - this.begunAt! >= this.silentConfirmMs)) return { kind: "silent" };
      return { kind: "waiting", progressed, confirming: false };
    }
    this.emptyInactive = 0;
    if (!isFinished(newest)) {
      // opencode stopped the turn without finishing it (e.g. a rejected question): idle, and the
      // newest message never gets a finish. Unchanged over a few backed-off polls = halted.
      this.stable = 0;
      if (progressed || this.unfinishedInactive === 0) {
        this.unfinishedInactive = 0;
        this.unfinishedSince = now;
      }
      this.unfinishedInactive++;
      if (this.unfinishedInactive >= this.haltPolls && now - this.unfinishedSince >= this.haltAfterMs) return { kind: "halted", messages: assistants };
      return { kind: "waiting", progressed, confirming: true, halting: this.unfinishedInactive };
    }
    this.unfinishedInactive = 0;
    if (ended && isFinalStep(newest)) return { kind: "done", messages: assistants };
    this.stable++;
    if (this.stable >= this.stablePolls) return { kind: "done", messages: assistants };
    return { kind: "waiting", progressed, confirming: true };
  }

  /**
   * True while the newest message streams a text or reasoning part: unfinished, its last part text
   * or reasoning. opencode 1.18 shows such a part's text only once it ends, so without the event
   * stream its growth is invisible; in a running session the open part is the model at work.
   */
  static partStreaming(assistants: SessionMessage[] | undefined): boolean {
    const newest = assistants?.at(-1);
    if (!newest || isFinished(newest)) return false;
    const last = newest.content?.at(-1);
    return last?.type === "text" || last?.type === "reasoning";
  }

  /** True when the newest message waits on a tool (a permission or question may be pending). */
  static toolPending(assistants: SessionMessage[] | undefined): boolean {
    const newest = assistants?.at(-1);
    return !!newest?.content?.some((p) => p.type === "tool" && (p.state?.status === "running" || p.state?.status === "pending"));
  }
}

/** Changes whenever the turn makes visible progress: new message, new part, growing text, tokens. */
export function signatureOf(assistants: SessionMessage[]): string {
  return assistants
    .map((m) => {
      const parts = (m.content ?? []).map((p) => `${p.type}:${p.text?.length ?? 0}:${p.state?.status ?? ""}`).join(",");
      return `${m.id}|${m.time.completed ?? ""}|${m.finish ?? ""}|${m.tokens?.output ?? 0}|${m.error ? "e" : ""}|${parts}`;
    })
    .join(";");
}

/** The turn's messages: everything newer than the admitted user message, oldest first. */
export function newMessagesSince(newestFirst: SessionMessage[], admittedId: string): { messages: SessionMessage[]; complete: boolean } {
  const out: SessionMessage[] = [];
  for (const m of newestFirst) {
    if (m.id === admittedId) return { messages: out.reverse(), complete: true };
    out.push(m);
  }
  return { messages: out.reverse(), complete: false };
}
