/** Bench helpers running in their own process (load generator, fakes): forked under tsx, talked to over IPC. */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

export function forkBenchChild(script: URL, args: string[] = []): ChildProcess {
  return fork(fileURLToPath(script), args, {
    cwd: REPO_ROOT,
    execArgv: ["--import", "tsx", "--conditions=ratatoskr-source"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
}

/** The next message from `child` that `pick` accepts; rejects if the child exits first. */
export function nextMessage<T>(child: ChildProcess, pick: (message: unknown) => T | undefined): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: unknown) => {
      const picked = pick(message);
      if (picked === undefined) return;
      cleanup();
      resolve(picked);
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`bench child exited (${code}) before answering`));
    };
    const cleanup = () => {
      child.off("message", onMessage);
      child.off("exit", onExit);
    };
    child.on("message", onMessage);
    child.on("exit", onExit);
  });
}

/** Ends a child: closes IPC (it shuts itself down), then SIGKILL if it has not gone within `ms`. */
export async function endChild(child: ChildProcess, ms = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  if (child.connected) child.disconnect();
  const timer = setTimeout(() => child.kill("SIGKILL"), ms);
  await exited;
  clearTimeout(timer);
}
