import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readlinkSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { serviceEntryArgs } from "@ratatoskr/testkit";

const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));

export interface DemoProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with [exit code, signal] once the process is gone. */
  exited: Promise<[number | null, NodeJS.Signals | null]>;
  /** Waits until the output matches, or fails with the output so far. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
}

/** `pnpm demo [args]`'s process (node directly, no pnpm in between), stdout and stderr piped. */
export function startDemoProcess(env: NodeJS.ProcessEnv, args: readonly string[] = []): DemoProcess {
  const child = spawn(
    process.execPath,
    [...serviceEntryArgs("all-in-one"), ...args],
    {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, RATATOSKR_DEMO: "true", HTTP_PORT: "0", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  return {
    child,
    output: () => out,
    exited,
    async waitFor(pattern, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = pattern.exec(out);
        if (match) return match;
        if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline)
          throw new Error(`demo output never matched ${pattern}:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}

/** Live processes (ps) whose command line holds `opencode` and `--port <port>`. */
export function opencodeProcesses(port: string): string[] {
  return execFileSync("ps", ["-eo", "pid=,stat=,args="], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes("opencode") && new RegExp(`--port ${port}\\b`).test(line))
    .filter((line) => !/^\s*\d+\s+Z/.test(line));
}

export async function eventually(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return condition();
}

/** Live processes (pid and command line, from ps) whose working directory is under `dir`. */
export function processesUnder(dir: string): string[] {
  return execFileSync("ps", ["-eo", "pid=,stat=,args="], { encoding: "utf8" })
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => {
      const [pid, stat] = line.split(/\s+/);
      if (!pid || stat?.startsWith("Z")) return false;
      try {
        return readlinkSync(`/proc/${pid}/cwd`).startsWith(dir);
      } catch {
        return false; // gone meanwhile
      }
    });
}

/**
 * Names in a run's TMPDIR (empty when it does not exist), without `tsx-<uid>`: the cache of the
 * TypeScript loader the test runs the sources with (`pnpm demo` runs the built files, no loader).
 */
export function entries(dir: string): string[] {
  try {
    return readdirSync(dir).filter((name) => !/^tsx-\d+$/.test(name));
  } catch {
    return [];
  }
}
