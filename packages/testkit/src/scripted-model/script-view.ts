import { ScriptEngine } from "./script-engine.ts";
import type { ModelRequest, ScriptRule, ScriptTurn } from "./script-types.ts";

/**
 * One test file's share of a scripted model: its own rules, conversations and recorded requests.
 * `claims` are the directories its sessions work in (`"all"`: every request is its own).
 */
export class ScriptView {
  readonly requests: ModelRequest[] = [];
  private readonly engine = new ScriptEngine();
  private readonly aborts = new Set<() => void>();

  constructor(readonly claims: string[] | "all") {}

  /** Adds a directory whose sessions are this view's. */
  claim(directory: string): void {
    if (this.claims !== "all") this.claims.push(directory);
  }

  /** Picks the reply and records the request (numbered within this view). */
  answer(recorded: ModelRequest): ScriptTurn {
    recorded.seq = this.requests.length + 1;
    const choice = this.engine.choose(recorded);
    recorded.answeredBy = choice.answeredBy;
    recorded.turnIndex = choice.turnIndex;
    this.requests.push(recorded);
    return choice.turn;
  }

  /** Registers what hangs up a reply in flight when the view closes; returns its removal. */
  onClose(abort: () => void): () => void {
    this.aborts.add(abort);
    return () => this.aborts.delete(abort);
  }

  addRule(rule: ScriptRule): () => void {
    return this.engine.add(rule);
  }

  setFallback(fallback: ScriptTurn | ((req: ModelRequest) => ScriptTurn)): void {
    this.engine.setFallback(fallback);
  }

  requestsFor(sessionId: string): ModelRequest[] {
    return this.requests.filter((r) => r.sessionId === sessionId);
  }

  reset(): void {
    this.engine.reset();
    this.requests.length = 0;
  }

  /** Hangs up its replies in flight (a held turn would hold a shared server's session forever). */
  close(): void {
    for (const abort of this.aborts) abort();
    this.aborts.clear();
  }
}

const WORKING_DIRECTORY = /^\s*Working directory: (.+)$/m;

/** The session's directory, from the environment block opencode puts in every system prompt. */
export function workingDirectoryOf(system: string): string | undefined {
  return WORKING_DIRECTORY.exec(system)?.[1]?.trim();
}

/** Length of the longest of `claims` that `directory` is in; -1 when it is in none. */
function depthIn(claims: readonly string[], directory: string): number {
  let best = -1;
  for (const claim of claims) {
    if ((directory === claim || directory.startsWith(`${claim}/`)) && claim.length > best) best = claim.length;
  }
  return best;
}

/**
 * Which open view answers a request: the one that claims its directory most closely; none when
 * a closed view's claim is closer (a session a finished file left behind); else the newest open
 * view (a vitest worker runs its files one at a time, so that is the running file's).
 */
export function routeRequest(
  open: readonly ScriptView[],
  closedClaims: readonly (readonly string[])[],
  directory: string | undefined,
): ScriptView | undefined {
  if (directory !== undefined) {
    let best: ScriptView | undefined;
    let bestDepth = -1;
    for (const view of open) {
      const depth = view.claims === "all" ? -1 : depthIn(view.claims, directory);
      if (depth > bestDepth) [best, bestDepth] = [view, depth];
    }
    if (closedClaims.some((claims) => depthIn(claims, directory) > bestDepth)) return undefined;
    if (best) return best;
  }
  return open.at(-1);
}
