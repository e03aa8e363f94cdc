import { PermanentError } from "@ratatoskr/runtime";

/**
 * A handler for work a later issue delivers: the job fails at once with a message saying so,
 * instead of pretending success or retrying something that cannot work yet.
 */
export function notImplemented(service: string, what: string): () => Promise<never> {
  return async () => {
    throw new PermanentError(`${service}: ${what} is not implemented yet`);
  };
}
