// How much memory opencode's process group holds, for recycle.mjs.
import { readdirSync, readFileSync } from "node:fs";

/** RSS of every process in the group (bwrap, opencode, its tools), from /proc. */
export function groupRss(pgid) {
  let total = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]) !== pgid) continue;
      const rss = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      total += rss ? Number(rss[1]) * 1024 : 0;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/**
 * The group's RSS, not fooled by a moment: while opencode starts a process (git, a tool), the
 * child shows the parent's whole RSS until it execs, so one reading can count opencode twice
 * (seen: 940 MB read for a 510 MB server). A reading over `limitBytes` is read again `confirm`
 * more times, `gapMs` apart, and the lowest counts.
 */
export async function steadyGroupRss(pgid, limitBytes, { read = groupRss, confirm = 2, gapMs = 50 } = {}) {
  let lowest = read(pgid);
  for (let i = 0; i < confirm && lowest >= limitBytes; i++) {
    await new Promise((resolve) => setTimeout(resolve, gapMs));
    lowest = Math.min(lowest, read(pgid));
  }
  return lowest;
}
