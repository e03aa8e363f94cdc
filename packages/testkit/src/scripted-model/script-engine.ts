import type { ModelRequest, RequestMatcher, ScriptRule, ScriptTurn } from "./script-types.ts";

export interface TurnChoice {
  turn: ScriptTurn;
  answeredBy: string;
  turnIndex: number;
}

const DEFAULT_FALLBACK: ScriptTurn = { text: "scripted model: no rule matched this request" };

/**
 * Picks the reply for a request. Rules are tried in registration order; each rule's turns are
 * consumed in order per conversation (opencode session). A tool-result call continues the rule
 * that produced the tool call; a user message takes the first matching rule with turns left.
 */
export class ScriptEngine {
  private rules: Array<ScriptRule & { id: number }> = [];
  private nextId = 0;
  private fallback: ScriptTurn | ((req: ModelRequest) => ScriptTurn) = DEFAULT_FALLBACK;
  /** conversation → rule id → turns consumed */
  private consumed = new Map<string, Map<number, number>>();
  /** conversation → rule id that answered last */
  private lastRule = new Map<string, number>();

  add(rule: ScriptRule): () => void {
    const id = this.nextId++;
    this.rules.push({ ...rule, id });
    return () => {
      this.rules = this.rules.filter((r) => r.id !== id);
    };
  }

  setFallback(fallback: ScriptTurn | ((req: ModelRequest) => ScriptTurn)): void {
    this.fallback = fallback;
  }

  reset(): void {
    this.rules = [];
    this.consumed.clear();
    this.lastRule.clear();
    this.fallback = DEFAULT_FALLBACK;
  }

  choose(req: ModelRequest): TurnChoice {
    const key = conversationKey(req);
    const counts = this.consumed.get(key) ?? new Map<number, number>();
    this.consumed.set(key, counts);

    const candidates = req.isToolResult
      ? this.rules.filter((r) => r.id === this.lastRule.get(key))
      : this.rules.filter((r) => matches(r.match, req));
    for (const rule of candidates) {
      const used = counts.get(rule.id) ?? 0;
      const turn = rule.reply[used];
      if (!turn) continue;
      counts.set(rule.id, used + 1);
      this.lastRule.set(key, rule.id);
      return { turn, answeredBy: rule.name ?? `rule#${rule.id}`, turnIndex: used };
    }
    this.lastRule.delete(key);
    const turn = typeof this.fallback === "function" ? this.fallback(req) : this.fallback;
    return { turn, answeredBy: "fallback", turnIndex: 0 };
  }
}

function conversationKey(req: ModelRequest): string {
  return req.sessionId ?? `${req.system.length}:${req.userTexts[0] ?? ""}`;
}

export function matches(matcher: RequestMatcher, req: ModelRequest): boolean {
  if (typeof matcher === "function") return matcher(req);
  if (matcher.sessionId !== undefined && req.sessionId !== matcher.sessionId) return false;
  if (matcher.systemIncludes !== undefined && !req.system.includes(matcher.systemIncludes)) return false;
  if (matcher.promptIncludes !== undefined) {
    const needle = matcher.promptIncludes;
    if (!req.userTexts.some((t) => t.includes(needle))) return false;
  }
  return true;
}
