import type { QueueSet } from "@ratatoskr/runtime";

/** Commands stored within this window are announced by one job. */
const GATHER_MS = 20;

export interface DrainRequestOptions {
  enqueue: QueueSet["enqueue"];
  /** The highest inbox row id this process stored (CommandAcceptor.newestStored). */
  newestStored(): number;
  /** The job could not be queued: the rows stay pending for the periodic pass. */
  onError(err: unknown, upTo: number): void;
}

/**
 * How a replica that answers webhooks but takes no intake jobs (`INGRESS_CONCURRENCY=0`) gets
 * its stored commands made into tasks: it asks the replicas that take intake jobs, with one
 * `drain-commands` job per window of stored commands, and spends nothing more on them. The job
 * id names the newest row stored, so asking again with nothing new adds no job.
 */
export function drainRequester(opts: DrainRequestOptions): () => void {
  let scheduled = false;
  let asked = 0;

  function ask(): void {
    scheduled = false;
    const upTo = opts.newestStored();
    if (upTo <= asked) return;
    asked = upTo;
    opts
      .enqueue({ queue: "intake", data: { v: 1, kind: "drain-commands", upTo }, jobId: `drain-commands-${upTo}` })
      .catch((err: unknown) => opts.onError(err, upTo));
  }

  return () => {
    if (scheduled) return;
    scheduled = true;
    setTimeout(ask, GATHER_MS);
  };
}
