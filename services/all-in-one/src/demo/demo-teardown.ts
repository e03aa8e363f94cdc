import { createServer } from "node:net";
import { StartupError } from "@ratatoskr/runtime";
import { Redis } from "ioredis";
import { pgDriver } from "@ratatoskr/db";

/** The demo was asked to stop (Ctrl-C, SIGTERM, SIGHUP) before or while it played. */
export class DemoStopped extends Error {
  override readonly name = "DemoStopped";
  constructor() {
    super("demo stopped");
  }
}

/**
 * What the demo started, stopped in reverse order. `own` records each piece as soon as it
 * exists, so a stop during start-up (or a failed start) stops exactly what was started so far.
 */
export class Teardown {
  private readonly closers: Array<() => Promise<unknown>> = [];
  private running: Promise<boolean> | undefined;

  constructor(private readonly signal?: AbortSignal) {}

  /** Awaits `value`, remembers how to close it; throws DemoStopped if a stop came meanwhile. */
  async own<T>(value: Promise<T>, close: (value: T) => Promise<unknown>): Promise<T> {
    const resource = await value;
    this.closers.push(() => close(resource));
    if (this.signal?.aborted) throw new DemoStopped();
    return resource;
  }

  /** Runs every closer once, newest first; true when all of them succeeded. Idempotent. */
  run(): Promise<boolean> {
    this.running ??= (async () => {
      let clean = true;
      for (const close of this.closers.reverse()) {
        await close().catch(() => (clean = false));
      }
      return clean;
    })();
    return this.running;
  }
}

/** Drops the run's schema and deletes its queues' keys: the run's data, and only its own. */
export async function dropDemoData(
  databaseUrl: string,
  redisUrl: string,
  schema: string,
  prefix: string,
): Promise<void> {
  const client = new pgDriver.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => client.end());
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 500 }) as AsyncIterable<
      string[]
    >) {
      if (keys.length > 0) await redis.unlink(...keys);
    }
  } finally {
    redis.disconnect();
  }
}

/** Fails with one readable line when the health port is taken (before anything is started). */
export async function checkPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (err: NodeJS.ErrnoException) =>
      reject(
        err.code === "EADDRINUSE"
          ? new StartupError(
              `port ${port} on ${host} is already in use (another demo or service?); set HTTP_PORT to a free port, or HTTP_PORT=0 for any`,
            )
          : err,
      ),
    );
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
