import type { Dispatcher } from "undici";
import { createCountingDispatcher, createOpencodeClient, type OpencodeClient } from "../../src/index.ts";
import type { OpencodeFixture } from "./opencode-fixture.ts";

/** Passes the event stream through, minus the chunks that mention `hidden`. */
function hidingEvents(handler: Dispatcher.DispatchHandler, hidden: string): Dispatcher.DispatchHandler {
  return new Proxy(handler, {
    get(target, key, receiver) {
      if (key === "onResponseData") {
        return (controller: Dispatcher.DispatchController, chunk: Buffer) => {
          if (!chunk.toString("utf8").includes(hidden)) target.onResponseData?.(controller, chunk);
        };
      }
      const value: unknown = Reflect.get(target, key, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * A client whose requests are recorded as "METHOD /path" with their send time. `breakEvents` makes
 * `/api/event` fail; `hideEvents` drops the stream's chunks that mention that text.
 */
export function recordingClient(fx: OpencodeFixture, options: { breakEvents?: boolean; hideEvents?: string } = {}) {
  const counting = createCountingDispatcher();
  const sent: Array<{ route: string; at: number }> = [];
  const notices: string[] = [];
  const warnings: string[] = [];
  const dispatcher = counting.dispatcher.compose((dispatch) => (opts, handler) => {
    const path = String(opts.path);
    sent.push({ route: `${opts.method} ${path.split("?")[0]}`, at: Date.now() });
    if (!path.startsWith("/api/event")) return dispatch(opts, handler);
    if (options.breakEvents) return dispatch({ ...opts, path: "/api/no-such-route" }, handler);
    return dispatch(opts, options.hideEvents ? hidingEvents(handler, options.hideEvents) : handler);
  });
  const client: OpencodeClient = createOpencodeClient({
    baseUrl: fx.server.url,
    password: fx.server.password,
    defaultModel: "fake/scripted",
    dispatcher,
    logger: { warn: (_d, message) => warnings.push(message), debug: (_d, message) => notices.push(message) },
  });
  /** Requests sent since `at` (epoch ms). */
  const sentSince = (at: number) => sent.filter((s) => s.at >= at);
  return { client, sent, sentSince, notices, warnings, close: async () => (await client.close(), await counting.close()) };
}
