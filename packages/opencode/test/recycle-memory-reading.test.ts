import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
// @ts-expect-error -- plain ESM shipped beside recycle.mjs, no type declarations
import { groupRss, steadyGroupRss } from "../../../deploy/opencode/group-memory.mjs";

type Reader = (pgid: number) => number;
const MB = 1024 * 1024;
const steady = steadyGroupRss as (pgid: number, limitBytes: number, opts?: { read?: Reader; confirm?: number; gapMs?: number }) => Promise<number>;

/** A reader that answers the given readings in turn and counts how often it was asked. */
function readings(...values: number[]): Reader & { asked: number } {
  const read = Object.assign(() => values[Math.min(read.asked++, values.length - 1)]!, { asked: 0 });
  return read;
}

/**
 * What deploy/opencode/recycle.mjs restarts opencode on. While opencode starts a process (git, a
 * tool) the child shows opencode's whole RSS until it execs, so one reading of the group can be
 * twice the truth (940 MB read for a 510 MB server, bench/opencode-memory.ts): such a moment
 * must not restart a server that is under its limit.
 */
describe("the recycling relay's memory reading", () => {
  it("takes a reading under the limit as it is, reading once", async () => {
    const read = readings(400 * MB, 900 * MB);
    expect(await steady(1, 500 * MB, { read, gapMs: 1 })).toBe(400 * MB);
    expect(read.asked).toBe(1);
  });

  it("does not take a moment's double count for the server's size: the next readings under the limit win", async () => {
    const read = readings(940 * MB, 510 * MB, 515 * MB);
    expect(await steady(1, 540 * MB, { read, gapMs: 1 })).toBe(510 * MB);
    expect(read.asked).toBe(2);
  });

  it("a server that stays over its limit is read as over it (the lowest of the readings)", async () => {
    const read = readings(900 * MB, 620 * MB, 640 * MB);
    expect(await steady(1, 540 * MB, { read, gapMs: 1 })).toBe(620 * MB);
    expect(read.asked).toBe(3);
  });

  it("reads a real process group from /proc: what its processes hold, not the machine's", async () => {
    const holder = spawn(process.execPath, ["-e", "globalThis.b = Buffer.alloc(64 * 1024 * 1024, 1); setInterval(() => {}, 1000); process.send('ready')"], {
      detached: true,
      stdio: ["ignore", "ignore", "ignore", "ipc"],
    });
    try {
      await new Promise((resolve) => holder.once("message", resolve));
      const rss = await steady(holder.pid!, 10_000 * MB, { gapMs: 1 });
      expect(rss).toBeGreaterThan(64 * MB);
      expect(rss).toBeLessThan(400 * MB);
      expect(groupRss(999_999_999)).toBe(0);
    } finally {
      process.kill(-holder.pid!, "SIGKILL");
    }
  });
});
