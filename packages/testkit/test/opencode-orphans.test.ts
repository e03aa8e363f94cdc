import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const CHILD = fileURLToPath(new URL("./support/opencode-child.ts", import.meta.url));
const GONE_WITHIN_MS = 10_000;

interface Started {
  group: number;
  rootDir: string;
  url: string;
}

/** Every live process (ps) that belongs to the server: its process group or its `--port`. */
function leftovers({ group, url }: Started): string[] {
  const port = new URL(url).port;
  return execFileSync("ps", ["-eo", "pid=,pgid=,stat=,args="], { encoding: "utf8" })
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([pid, pgid, stat, ...args]) => {
      if (!pid || stat?.startsWith("Z")) return false;
      return Number(pgid) === group || (args.includes("serve") && args.join(" ").includes(`--port ${port}`));
    })
    .map((fields) => fields.join(" "));
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return condition();
}

describe("opencode serve never outlives the process that started it", () => {
  it.each(["SIGKILL", "SIGTERM", "SIGHUP", "SIGINT"] as const)(
    "%s to the parent: no process of its opencode remains and its temp root is gone",
    async (signal) => {
      const child = spawn(process.execPath, ["--import", "tsx", CHILD], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out += d.toString()));
      const exited = once(child, "exit");
      const ready = await waitUntil(() => out.includes("\n") || child.exitCode !== null, 60_000);
      expect(ready && child.exitCode === null, out).toBe(true);
      const started = JSON.parse(out.split("\n")[0]!) as Started;
      expect(leftovers(started).some((line) => line.includes(`--port ${new URL(started.url).port}`))).toBe(
        true,
      );

      child.kill(signal);
      const [, killedBy] = await exited;
      expect(killedBy).toBe(signal); // died by the signal: none of its own code ran
      const clean = await waitUntil(
        () => leftovers(started).length === 0 && !existsSync(started.rootDir),
        GONE_WITHIN_MS,
      );
      expect({ clean, leftovers: leftovers(started), rootDir: existsSync(started.rootDir) }).toEqual({
        clean: true,
        leftovers: [],
        rootDir: false,
      });
    },
    90_000,
  );
});
