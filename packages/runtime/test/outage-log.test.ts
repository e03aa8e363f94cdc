import { describe, expect, it } from "vitest";
import { createOutageLog } from "../src/index.ts";

function recorder() {
  const lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> = [];
  const logger = {
    warn: (fields: object, msg: string) => lines.push({ level: "warn", msg, fields: fields as Record<string, unknown> }),
    info: (fields: object, msg: string) => lines.push({ level: "info", msg, fields: fields as Record<string, unknown> }),
  };
  return { lines, logger: logger as never };
}

describe("outage log", () => {
  it("tells a long outage in a handful of lines: down, a reminder per interval, back", () => {
    let now = 0;
    const { lines, logger } = recorder();
    const outage = createOutageLog({ logger, what: "redis", remindEveryMs: 30_000, now: () => now });
    // 200 failed reconnects over 70 s, one every 350 ms.
    for (let i = 0; i < 200; i++, now += 350) outage.failed(new Error("ECONNREFUSED"));
    expect(outage.down).toBe(true);
    outage.recovered();
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ["warn", "redis unreachable; retrying"],
      ["warn", "redis still unreachable; retrying"],
      ["warn", "redis still unreachable; retrying"],
      ["info", "redis reachable again"],
    ]);
    expect(lines[3]!.fields).toMatchObject({ failures: 200, downForMs: 70_000 });
    expect(outage.down).toBe(false);
  });

  it("says nothing when it recovers without having been down, and starts over after a recovery", () => {
    const { lines, logger } = recorder();
    const outage = createOutageLog({ logger, what: "redis" });
    outage.recovered();
    expect(lines).toEqual([]);
    outage.failed(new Error("a"));
    outage.recovered();
    outage.failed(new Error("b"));
    expect(lines.map((l) => l.msg)).toEqual([
      "redis unreachable; retrying",
      "redis reachable again",
      "redis unreachable; retrying",
    ]);
  });
});
