/* global process */
/**
 * The RSS floor: a bare BullMQ worker with no-op jobs, plain node (no tsx), what a minimal
 * service on this stack costs. argv: redis url, queue prefix, queue name, concurrency.
 * Tells its parent "ready" over IPC once the worker is running; stops when IPC closes.
 */
import { Worker } from "bullmq";
import { Redis } from "ioredis";

const [url, prefix, queue, concurrency] = process.argv.slice(2);
const connection = new Redis(url, { maxRetriesPerRequest: null });
const worker = new Worker(queue, async () => ({ ok: true }), {
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
