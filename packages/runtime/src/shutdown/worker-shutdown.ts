import type { WorkerHandle } from "../worker/run-worker.ts";
import type { ShutdownRegistry } from "./shutdown-registry.ts";

/** Room for the hand-back and BullMQ's own close on top of the grace period. */
const CLOSE_MARGIN_MS = 10_000;

/**
 * Registers workers in the `workers` phase: each gets `gracePeriodMs` (SHUTDOWN_TIMEOUT_MS) to
 * finish, then hands its jobs back. A worker that could not even hand back makes the exit non-zero.
 */
export function registerWorkers(
  registry: ShutdownRegistry,
  handles: readonly WorkerHandle[],
  gracePeriodMs: number,
): void {
  for (const handle of handles) {
    registry.register(
      "workers",
      `${handle.queue} worker`,
      async () => {
        const result = await handle.close(gracePeriodMs);
        if (result === "abandoned") throw new Error(`${handle.queue} worker could not hand its jobs back`);
        return result;
      },
      { timeoutMs: gracePeriodMs + CLOSE_MARGIN_MS },
    );
  }
}
