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
   * "Not active and nothing new" observations before the turn counts as silent (default 3). When
   * opencode was seen running the turn and it went idle with nothing to show, that is its own
   * signal that the turn is over (a missing model fails this way): 2 such polls suffice, at any time.
   */
  silentPolls?: number;
  /**
   * Never seen running (the running window fell between two polls, or a loaded server has not
   * started yet): silent only this long after admit (ms, default 3000), a fallback, not the rule.
   */
  silentAfterMs?: number;
  /** Unchanged "not active + newest unfinished" observations before the turn counts as halted (default 4)… */
  haltPolls?: number;
  /** …spanning at least this long (ms, default 500), so a turn between two steps is not mistaken. */
  haltAfterMs?: number;
}

export function isFinished(m: SessionMessage): boolean {
  return m.time.completed !== undefined || m.finish !== undefined || m.error !== undefined;
}

/**
 * Pure completion state for one prompt turn. Feed it each poll's observation; it says when the
 * turn is done (not active, newest new assistant message finished, unchanged over consecutive
 * polls), silent (never ran), or still going and whether real progress happened.
 */
export class CompletionTracker {
  private lastSignature = "";
  private stable = 0;
  private emptyInactive = 0;
  private sawActive = false;
  private readonly stablePolls: number;
  private readonly silentPolls: number;
  private readonly silentAfterMs: number;
  private readonly haltPolls: number;
  private readonly haltAfterMs: number;
  private unfinishedInactive = 0;
  private unfinishedSince = 0;

  constructor(
    private readonly admittedAt: number,
    options: TrackerOptions = {},
  ) {
    this.stablePolls = options.stablePolls ?? 2;
    this.silentPolls = options.silentPolls ?? 3;
    this.silentAfterMs = options.silentAfterMs ?? 3_000;
    this.haltPolls = options.haltPolls ?? 4;
    this.haltAfterMs = options.haltAfterMs ?? 500;
  }

  /** `assistants`: the turn's new assistant messages, oldest first; undefined when not fetched this poll. */
  observe(active: boolean, assistants: SessionMessage[] | undefined, now: number): TrackerDecision {
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
      this.emptyInactive++;
      if (this.sawActive ? this.emptyInactive >= 2 : this.emptyInactive >= this.silentPolls && now - this.admittedAt >= this.silentAfterMs) return { kind: "silent" };
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
    this.stable++;
    if (this.stable >= this.stablePolls) return { kind: "done", messages: assistants };
    return { kind: "waiting", progressed, confirming: true };
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
