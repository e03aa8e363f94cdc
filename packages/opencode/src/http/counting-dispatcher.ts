import type { Dispatcher } from "undici";
import { Agent } from "./undici-core.ts";

/** A keep-alive dispatcher that counts the HTTP requests sent through it (metrics, benchmarks). */
export function createCountingDispatcher(): { dispatcher: Dispatcher; requests: () => number; close: () => Promise<void> } {
  let count = 0;
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  const dispatcher = agent.compose((dispatch) => (opts, handler) => {
    count++;
    return dispatch(opts, handler);
  });
  return { dispatcher, requests: () => count, close: () => agent.close() };
}
