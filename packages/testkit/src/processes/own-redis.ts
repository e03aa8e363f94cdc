import { execFile, spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { promisify } from "node:util";
import { freePort } from "../opencode-server/free-port.ts";

/**
 * A redis-server of the test's own, on a free port, without persistence: fault trials stop, wipe
 * and restart it (the shared Redis is never touched). `restart` keeps the port, so clients
 * configured with its URL reconnect by themselves.
 */
export interface OwnRedis {
  readonly url: string;
  readonly port: number;
  /** FLUSHALL: what a restart without persistence leaves. */
  wipe(): Promise<void>;
  /** SIGKILL; resolves once the process is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port (after `kill`), empty. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

const run = promisify(execFile);

const cli = (port: number, ...args: string[]) => run("redis-cli", ["-h", "127.0.0.1", "-p", String(port), ...args]);

async function waitReady(port: number, deadlineMs = 10_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    try {
      if ((await cli(port, "ping")).stdout.trim() === "PONG") return;
    } catch (err) {
      if (Date.now() > until) throw err;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: "ignore",
    });
    await waitReady(port);
  };
  const kill = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const gone = once(running, "exit");
    running.kill("SIGKILL");
    await gone;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async wipe() {
      await cli(port, "flushall");
    },
    kill,
    start,
    stop: kill,
  };
}
