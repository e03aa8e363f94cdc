import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { describe, expect, it, vi } from "vitest";

const BUILD = new URL("../../../scripts/build.mjs", import.meta.url).pathname;

/** Pids of the children of `pid` (Linux's /proc). */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const buildDirs = () => readdirSync(tmpdir()).filter((name) => name.startsWith("ratatoskr-build-"));

/**
 * `pnpm start` and `pnpm demo` compile first when the sources changed (issue 21.10): a stop signal
 * then is one stop. build.mjs without --if-stale always compiles; it is stopped as soon as its tsc
 * runs, long before tsc could finish.
 */
describe("build.mjs stopped while it compiles", () => {
  it.each([
    ["SIGINT", "sent to it twice (pnpm forwards its own copy of a Ctrl-C)", false],
    ["SIGTERM", "sent to it", false],
    ["SIGHUP", "sent to it (its terminal closed)", false],
    ["SIGINT", "sent to its process group, as a terminal's Ctrl-C is (tsc gets it too)", true],
  ] as const)("stops on %s %s: tsc is gone, one line, status 130, no stack", async (signal, _how, group) => {
    const before = buildDirs();
    const build = spawn(process.execPath, [BUILD], { stdio: ["ignore", "pipe", "pipe"], detached: group });
    let output = "";
    build.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    build.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      build.on("exit", (code, by) => resolve({ code, signal: by })),
    );
    const tsc = await vi.waitFor(
      () => {
        const [pid] = childrenOf(build.pid!);
        if (pid === undefined) throw new Error("tsc not started yet");
        return pid;
      },
      { timeout: 15_000, interval: 10 },
    );
    if (group) process.kill(-build.pid!, signal);
    else build.kill(signal);
    if (signal === "SIGINT" && !group) build.kill(signal);
    expect(await exited).toEqual({ code: 130, signal: null });
    expect(alive(tsc)).toBe(false);
    expect(output.trim().split("\n")).toEqual([
      "Compiling Ratatoskr…",
      `Compile stopped (${signal}); nothing was started.`,
    ]);
    expect(buildDirs().filter((name) => !before.includes(name))).toEqual([]);
  });
});
