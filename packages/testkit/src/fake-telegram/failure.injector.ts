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
