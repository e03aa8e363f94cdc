import { API_ERRORS, BotApiError, type ResponseParameters } from "./bot-api.error.ts";

/** A failure the next call(s) of a method will get instead of their result. */
export type InjectedFailure =
  | { error_code: 429; retry_after: number }
  | { error_code: number; description: string; parameters?: ResponseParameters };

/** Queues of injected failures per method (method names are case-insensitive, as in the API). */
export class FailureInjector {
  private readonly queued = new Map<string, BotApiError[]>();

  add(method: string, failure: InjectedFailure, times: number): void {
    const error =
      "retry_after" in failure
        ? API_ERRORS.tooManyRequests(failure.retry_after)
        : new BotApiError(failure.error_code, failure.description, failure.parameters);
    const key = method.toLowerCase();
    const queue = this.queued.get(key) ?? [];
    for (let i = 0; i < times; i++) queue.push(error);
    this.queued.set(key, queue);
  }

  take(method: string): BotApiError | undefined {
    return this.queued.get(method.toLowerCase())?.shift();
  }
}

/**
 * What happens to the answer of a call that did run (the message was delivered): it arrives late,
 * or the connection is reset instead — the two ways a real send can reach the chat while the bot
 * never learns it did.
 */
export type AnswerFault = { kind: "delay"; ms: number } | { kind: "reset" };

/** Queues of answer faults per method (case-insensitive). */
export class AnswerFaults {
  private readonly queued = new Map<string, AnswerFault[]>();

  add(method: string, fault: AnswerFault, times: number): void {
    const key = method.toLowerCase();
    const queue = this.queued.get(key) ?? [];
    for (let i = 0; i < times; i++) queue.push(fault);
    this.queued.set(key, queue);
  }

  take(method: string): AnswerFault | undefined {
    return this.queued.get(method.toLowerCase())?.shift();
  }
}
