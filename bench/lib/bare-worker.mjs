/* global process, performance */
/**
 * The RSS floor: a bare BullMQ worker with no-op jobs, plain node (no tsx), what a minimal
 * service on this stack costs. argv: redis url, queue prefix, queue name, concurrency, and
 * `report` to tell the parent each job's start ({ started: id, at: epoch ms }, sub-ms) over IPC.
 * Tells its parent "ready" over IPC once the worker is running; stops when IPC closes.
 */
import { Worker } from "bullmq";
import { Redis } from "ioredis";

const [url, prefix, queue, concurrency, report] = process.argv.slice(2);
const connection = new Redis(url, { maxRetriesPerRequest: null });
async function handle(job) {
  if (report === "report")
    process.send?.({ started: job.id, at: performance.timeOrigin + performance.now() });
  return { ok: true };
}
const worker = new Worker(queue, handle, {
  connection,
  prefix,
  concurrency: Number(concurrency),
});
await worker.waitUntilReady();
process.send?.("ready");
process.on("disconnect", () => {
  void worker.close().finally(() => {
    connection.disconnect();
    process.exit(0);
  });
});
