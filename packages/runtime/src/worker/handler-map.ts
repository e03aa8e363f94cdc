import { QUEUE_NAMES, type QueueName } from "@ratatoskr/contracts";
import { runWorker, type JobHandler, type RunWorkerOptions, type WorkerHandle } from "./run-worker.ts";

/** One handler per consumed queue: leaving one out is a compile error. */
export type JobHandlerMap<Q extends QueueName = QueueName> = { readonly [K in Q]: JobHandler<K> };

export interface RunWorkersOptions<Q extends QueueName> extends Omit<
  RunWorkerOptions<QueueName>,
  "queue" | "handler" | "concurrency"
> {
  /** The queues this process consumes (all of them in the all-in-one entry). */
  queues: readonly Q[];
  handlers: NoInfer<JobHandlerMap<Q>>;
  concurrency: number | NoInfer<{ readonly [K in Q]?: number }>;
}

/**
 * Start-up check for what the types cannot see (queue lists from config, plain JS callers):
 * throws naming every consumed queue without a handler and every unknown queue name.
 */
export function assertHandlers(queues: readonly string[], handlers: Readonly<Record<string, unknown>>): void {
  const unknown = queues.filter((q) => !(QUEUE_NAMES as readonly string[]).includes(q));
  const missing = queues.filter((q) => typeof handlers[q] !== "function");
  const problems = [
    ...(unknown.length ? [`unknown queues: ${unknown.join(", ")}`] : []),
    ...(missing.length ? [`no handler for: ${missing.join(", ")}`] : []),
  ];
  if (problems.length) throw new Error(`cannot start workers: ${problems.join("; ")}`);
}

export function runWorkers<Q extends QueueName>(opts: RunWorkersOptions<Q>): WorkerHandle[] {
  const { queues, handlers, concurrency, ...common } = opts;
  assertHandlers(queues, handlers);
  return queues.map(<K extends Q>(queue: K) =>
    runWorker<K>({
      ...common,
      queue,
      handler: handlers[queue] as JobHandler<K>,
      concurrency: typeof concurrency === "number" ? concurrency : (concurrency[queue] ?? 1),
    }),
  );
}
