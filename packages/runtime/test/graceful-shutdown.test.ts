import { EventEmitter } from "node:events";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { jobRequest } from "@ratatoskr/contracts";
import { HandBackError, ShutdownRegistry, registerWorkers, type SignalSource } from "../src/index.ts";
import { createWorkerHarness, metricValue, type WorkerHarness } from "./support/worker-harness.ts";
import { waitFor } from "./support/wait-for.ts";

let h: WorkerHarness;
beforeEach(() => {
  h = createWorkerHarness();
});
afterEach(async () => {
  await h.cleanup();
});

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const devJob = (taskId: number, id: string) =>
  jobRequest("dev", { v: 1, taskId, kind: "implement", round: 1 }, id);

describe("worker shutdown", () => {
  it("lets a running job finish within the grace period, then takes no new job", async () => {
    const started = deferred();
    const release = deferred();
    const handle = h.startWorker("dev", async () => {
      started.resolve();
      await release.promise;
      return { by: "worker-a" };
    });
    await h.queues.enqueue(devJob(1, "1-run-dev-1"));
    await started.promise;
    await h.queues.enqueue(devJob(2, "2-run-dev-1"));

    const closing = handle.close(10_000);
    await waitFor(() => handle.worker.closing !== undefined, { what: "close to begin" });
    release.resolve();

    expect(await closing).toBe("drained");
    const first = await h.queues.queues.dev.getJob("1-run-dev-1");
    expect(await first?.getState()).toBe("completed");
    expect(first?.returnvalue).toEqual({ by: "worker-a" });
    expect(await h.queues.queues.dev.getJobState("2-run-dev-1")).toBe("waiting");
  });

  it.each([
    ["stops when its signal aborts", "honours"],
    ["ignores its signal", "ignores"],
  ])(
    "hands a job back when the grace period ends and its handler %s; another worker completes it",
    async (_t, mode) => {
      const started = deferred<AbortSignal>();
      const handleA = h.startWorker("dev", async (_data, { signal }) => {
        started.resolve(signal);
        await new Promise((_resolve, reject) => {
          if (mode === "honours") signal.addEventListener("abort", () => reject(signal.reason as Error));
        });
      });
      await h.queues.enqueue(devJob(3, "3-run-dev-1"));
      const signalA = await started.promise;

      expect(await handleA.close(200)).toBe("handed-back");
      expect(signalA.aborted).toBe(true);
      expect(signalA.reason).toBeInstanceOf(HandBackError);
      expect(await h.queues.queues.dev.getJobState("3-run-dev-1")).toBe("waiting");
      expect(
        await metricValue(h.metrics, "ratatoskr_jobs_processed_total", {
          queue: "dev",
          outcome: "handed-back",
        }),
      ).toBe(1);

      h.startWorker("dev", async () => ({ by: "worker-b" }));
      const job = await waitFor(async () => {
        const j = await h.queues.queues.dev.getJob("3-run-dev-1");
        return j?.finishedOn ? j : undefined;
      });
      expect(await job.getState()).toBe("completed");
      expect(job.returnvalue).toEqual({ by: "worker-b" });
      expect(job.failedReason).toBeFalsy();
    },
  );

  it("runs the registry on SIGTERM: worker drained, connections closed, exit code 0", async () => {
    const signals = new EventEmitter();
    const exitCodes: number[] = [];
    const registry = new ShutdownRegistry({
      logger: h.logger,
      exit: (code) => exitCodes.push(code),
      signals: signals as SignalSource,
    });
    const started = deferred();
    const handle = h.startWorker("dev", async () => {
      started.resolve();
      // Work that outlasts the signal but fits in the grace period.
      await waitFor(() => handle.worker.closing !== undefined);
      return "done";
    });
    registerWorkers(registry, [handle], 5_000);
    registry.register("queues", "queues", () => h.queues.close());
    registry.installSignalHandlers();

    await h.queues.enqueue(devJob(6, "6-run-dev-1"));
    await started.promise;
    signals.emit("SIGTERM");

    await waitFor(() => exitCodes.length > 0, { what: "exit" });
    expect(exitCodes).toEqual([0]);
    expect(await h.workerConnection.hget(`${h.prefix}:dev:6-run-dev-1`, "returnvalue")).toBe('"done"');
  });
});
