import type { Dispatcher } from "undici";
import { OpencodeApi } from "../api/opencode-api.ts";
import { OpencodeHttp } from "../http/opencode-http.ts";
import { ActivePoller } from "../run/active-poller.ts";
import { EventHub } from "../run/event-hub.ts";
import { LocationWarmup } from "../run/location-warmup.ts";
import { ServerPrices } from "../run/model-prices.ts";
import { PromptGate } from "./prompt-gate.ts";

/** Everything the client keeps per opencode server: API, shared pollers, event stream, prompt cap. */
export interface OpencodeServerHandle {
  readonly url: string;
  readonly api: OpencodeApi;
  readonly activePoller: ActivePoller;
  readonly warmup: LocationWarmup;
  readonly events: EventHub;
  readonly gate: PromptGate;
  /** The prices its configuration gives the models it defines (see `messageCost`). */
  readonly prices: ServerPrices;
}

export interface ServerHandleOptions {
  baseUrl: string;
  password?: string;
  dispatcher: Dispatcher;
  requestTimeoutMs?: number;
  maxConcurrentPrompts: number;
}

export function createServerHandle(o: ServerHandleOptions): OpencodeServerHandle {
  const http = new OpencodeHttp({
    baseUrl: o.baseUrl,
    ...(o.password ? { password: o.password } : {}),
    dispatcher: o.dispatcher,
    ...(o.requestTimeoutMs ? { requestTimeoutMs: o.requestTimeoutMs } : {}),
  });
  const api = new OpencodeApi(http);
  return {
    url: http.baseUrl,
    api,
    activePoller: new ActivePoller((signal) => api.active(signal)),
    warmup: new LocationWarmup(api),
    events: new EventHub(http),
    gate: new PromptGate(o.maxConcurrentPrompts, http.baseUrl),
    prices: new ServerPrices((signal) => api.config(signal)),
  };
}
