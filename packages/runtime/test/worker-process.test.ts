import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { jobRequest } from "@ratatoskr/contracts";
import { createWorkerHarness, type WorkerHarness } from "./support/worker-harness.ts";
import { waitFor } from "./support/wait-for.ts";

const FIXTURE = fileURLToPath(new URL("./fixtures/worker-process.ts", import.meta.url));
/** `--import tsx` resolves from the working directory: the repository root has tsx. */
const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

let h: WorkerHarness;
let child: ChildProcess | undefined;
beforeEach(() => {
  h = createWorkerHarness();
});
afterEach(async () => {
  if (child && child.exitCode === null) child.kill("SIGKILL");
  await h.cleanup();
});

function startChild(env: Record<string, string>) {
  const proc = spawn(process.execPath, ["--conditions=ratatoskr-source", "--import", "tsx", FIXTURE], {
    env: { ...process.env, REDIS_URL: h.redisUrl, QUEUE_PREFIX: h.prefix, LOG_LEVEL: "info", ...env },
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  proc.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  proc.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  child = proc;
  return { proc, exited, stdout: () => stdout, stderr: () => stderr };
}

const devJob = (id: string) => jobRequest("dev", { v: 1, taskId: 21, kind: "implement", round: 1 }, id);

async function finishedJob(id: string) {
  return waitFor(
    async () => {
      const job = await h.queues.queues.dev.getJob(id);
      return job?.finishedOn ? job : undefined;
    },
    { timeoutMs: 15_000, what: `job ${id} to finish` },
  );
}

describe("worker process on SIGTERM", () => {
  it("finishes its running job, then exits 0", async () => {
    const worker = startChild({ JOB_MODE: "finish", JOB_DURATION_MS: "800", SHUTDOWN_TIMEOUT_MS: "10000" });
    await waitFor(() => worker.stdout().includes("ready"), { timeoutMs: 15_000, what: "the child worker" });
    await h.queues.enqueue(devJob("21-run-dev-1"));
    await waitFor(() => worker.stdout().includes("started 21-run-dev-1"), { what: "the job to start" });

    worker.proc.kill("SIGTERM");
    expect(await worker.exited).toBe(0);
    const job = await finishedJob("21-run-dev-1");
    expect(await job.getState()).toBe("completed");
    expect(job.returnvalue).toMatchObject({ by: "child", pid: worker.proc.pid });
  });

  it("stops the same way on SIGHUP (its terminal closed): the running job finishes, exit 0", async () => {
    const worker = startChild({ JOB_MODE: "finish", JOB_DURATION_MS: "800", SHUTDOWN_TIMEOUT_MS: "10000" });
    await waitFor(() => worker.stdout().includes("ready"), { timeoutMs: 15_000, what: "the child worker" });
    await h.queues.enqueue(devJob("21-run-dev-hup"));
    await waitFor(() => worker.stdout().includes("started 21-run-dev-hup"), { what: "the job to start" });

    worker.proc.kill("SIGHUP");
    expect(await worker.exited).toBe(0);
    const job = await finishedJob("21-run-dev-hup");
    expect(await job.getState()).toBe("completed");
    expect(job.returnvalue).toMatchObject({ by: "child", pid: worker.proc.pid });
  });

  it("hands back a job that outlasts the grace period, exits 0, and a new worker completes it", async () => {
    const worker = startChild({ JOB_MODE: "hang", SHUTDOWN_TIMEOUT_MS: "300" });
    await waitFor(() => worker.stdout().includes("ready"), { timeoutMs: 15_000, what: "the child worker" });
    await h.queues.enqueue(devJob("21-run-dev-2"));
    await waitFor(() => worker.stdout().includes("started 21-run-dev-2"), { what: "the job to start" });

    worker.proc.kill("SIGTERM");
    expect(await worker.exited).toBe(0);
    expect(worker.stderr()).toContain("job handed back to the queue at shutdown");
    expect(await h.queues.queues.dev.getJobState("21-run-dev-2")).toBe("waiting");

    h.startWorker("dev", async () => ({ by: "replacement" }));
    const job = await finishedJob("21-run-dev-2");
    expect(await job.getState()).toBe("completed");
    expect(job.returnvalue).toEqual({ by: "replacement" });
  });
});

describe("worker process killed (SIGKILL) mid-job", () => {
  it("its job is picked up by another worker within lock + two stalled checks (≤ 25 s), and runs there once", async () => {
    const worker = startChild({ JOB_MODE: "hang" });
    await waitFor(() => worker.stdout().includes("ready"), { timeoutMs: 15_000, what: "the child worker" });
    await h.queues.enqueue(devJob("21-run-dev-3"));
    await waitFor(() => worker.stdout().includes("started 21-run-dev-3"), { what: "the job to start" });

    worker.proc.kill("SIGKILL");
    const killedAt = Date.now();
    let runs = 0;
    h.startWorker("dev", async () => ({ by: "replacement", run: ++runs }));
    const job = await waitFor(
      async () => {
        const found = await h.queues.queues.dev.getJob("21-run-dev-3");
        return found?.finishedOn ? found : undefined;
      },
      { timeoutMs: 40_000, what: "the killed worker's job to finish elsewhere" },
    );
    expect(job.returnvalue).toEqual({ by: "replacement", run: 1 });
    expect(job.finishedOn! - killedAt).toBeLessThanOrEqual(25_000);
  }, 60_000);
});
