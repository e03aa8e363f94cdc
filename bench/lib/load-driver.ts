/**
 * The load generator of the webhook benches, run as a child process (forked by webhook-load.ts)
 * so that building, signing and timing requests never shares an event loop with the server
 * under test. Messages in: a run (open loop at a rate, or closed loop at a concurrency); out: its
 * latencies or its rate, and how many requests failed.
 */
import { Agent, request } from "node:http";
import { webhookRequests, type WebhookRequest, type WebhookTarget } from "./webhook-payloads.ts";

export type LoadRun =
  | { id: number; target: WebhookTarget; mode: "rate"; rate: number; count: number }
  | { id: number; target: WebhookTarget; mode: "max"; concurrency: number; count: number };

export interface LoadResult {
  id: number;
  /** Open loop: each request's latency in ms. */
  latencies?: number[];
  /** Closed loop: requests per second. */
  perSecond?: number;
  errors: number;
  firstError?: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

function post(url: URL, req: WebhookRequest): Promise<void> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(req.body),
          ...req.headers,
        },
      },
      (res) => {
        res.resume();
        res.on("end", () => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve();
          else reject(new Error(`status ${status}`));
        });
      },
    );
    outgoing.on("error", reject);
    outgoing.end(req.body);
  });
}

/** One request factory per URL for the driver's life, so ids never repeat between runs. */
const makers = new Map<string, () => WebhookRequest>();
function maker(target: WebhookTarget): () => WebhookRequest {
  let make = makers.get(target.url);
  if (!make) makers.set(target.url, (make = webhookRequests(target)));
  return make;
}

async function execute(run: LoadRun): Promise<LoadResult> {
  const url = new URL(run.target.url);
  const next = maker(run.target);
  let errors = 0;
  let firstError: string | undefined;
  const failed = (error: unknown) => {
    errors++;
    firstError ??= error instanceof Error ? error.message : String(error);
  };
  if (run.mode === "max") {
    let sent = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: run.concurrency }, async () => {
        while (sent < run.count) {
          sent++;
          await post(url, next()).catch(failed);
        }
      }),
    );
    return { id: run.id, perSecond: (run.count * 1000) / (performance.now() - started), errors, firstError };
  }
  const latencies: number[] = [];
  const inFlight: Array<Promise<void>> = [];
  const started = performance.now();
  for (let i = 0; i < run.count; i++) {
    const due = started + (i * 1000) / run.rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const req = next();
    // From when it was due (a late send counts against the server: no coordinated omission),
    // or from when it went out if a timer fired early (never a negative latency).
    const from = Math.min(due, performance.now());
    inFlight.push(post(url, req).then(() => void latencies.push(performance.now() - from), failed));
  }
  await Promise.all(inFlight);
  return { id: run.id, latencies, errors, firstError };
}

process.on("message", (run: LoadRun) => {
  void execute(run).then((result) => process.send?.(result));
});
process.on("disconnect", () => {
  agent.destroy();
  process.exit(0);
});
