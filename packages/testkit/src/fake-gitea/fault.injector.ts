import type { FastifyReply, FastifyRequest } from "fastify";

export interface FaultRule {
  /** Answer this status instead of the real one (e.g. 503). Unset: answer normally. */
  status?: number;
  /** Wait this long (ms) before answering. */
  delayMs?: number;
  /**
   * Carry the call out, then hold its answer until this settles: the caller dies with the
   * effect made and unknown to it (a PR created, its answer never read).
   */
  holdAnswerUntil?: Promise<unknown>;
  /** How many matching calls the rule applies to. Default 1. */
  times?: number;
  method?: string;
  /** Only calls whose path matches. */
  path?: RegExp;
}

/** Failures a test asks the fake API to show: 5xx answers and slow answers, for the next calls. */
export class FaultInjector {
  private readonly rules: (FaultRule & { left: number })[] = [];
  private readonly held = new WeakMap<FastifyRequest, Promise<unknown>>();

  add(rule: FaultRule): void {
    this.rules.push({ ...rule, left: rule.times ?? 1 });
  }

  clear(): void {
    this.rules.length = 0;
  }

  /** Applies the first matching rule; true when the answer was already sent. */
  async apply(request: FastifyRequest, reply: FastifyReply, path: string): Promise<boolean> {
    const rule = this.rules.find(
      (r) => r.left > 0 && (!r.method || r.method === request.method) && (!r.path || r.path.test(path)),
    );
    if (!rule) return false;
    rule.left--;
    if (rule.holdAnswerUntil) this.held.set(request, rule.holdAnswerUntil);
    if (rule.delayMs) await new Promise((resolve) => setTimeout(resolve, rule.delayMs));
    if (rule.status === undefined) return false;
    await reply.code(rule.status).send({ message: `injected ${rule.status}`, url: "" });
    return true;
  }

  /** Before an answer is sent (an onSend hook): waits for the hold a rule put on its call. */
  async beforeAnswer(request: FastifyRequest): Promise<void> {
    await this.held.get(request)?.catch(() => undefined);
  }
}
