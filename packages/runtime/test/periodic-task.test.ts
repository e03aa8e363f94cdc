import { describe, expect, it, vi } from "vitest";
import { startPeriodicTask } from "../src/index.ts";

function recorder() {
  const lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> = [];
  const at = (level: string) => (fields: object, msg: string) =>
    void lines.push({ level, msg, fields: fields as Record<string, unknown> });
  return { lines, logger: { warn: at("warn"), error: at("error"), info: at("info") } as never };
}

const outage = () => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });

describe("periodic task", () => {
  it("tells a Postgres outage over 200 passes in a handful of warnings: when it starts, at intervals, when it ends", async () => {
    let now = 0;
    let passes = 0;
    const { lines, logger } = recorder();
    const stop = startPeriodicTask({
      name: "notification-sweep",
      intervalMs: 0,
      logger,
      now: () => now,
      remindEveryMs: 30_000,
      run: async () => {
        passes += 1;
        now += 350;
        if (passes <= 200) throw outage();
      },
    });
    await vi.waitFor(() => expect(passes).toBeGreaterThan(201));
    await stop();
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ["warn", "periodic task paused: a dependency is away; retrying"],
      ["warn", "periodic task still failing"],
      ["warn", "periodic task still failing"],
      ["info", "periodic task works again"],
    ]);
    expect(lines[3]!.fields).toMatchObject({ task: "notification-sweep", failures: 200 });
  });

  it("keeps a bug an error, told once and reminded, not once a second", async () => {
    let passes = 0;
    const { lines, logger } = recorder();
    const stop = startPeriodicTask({
      name: "sweep",
      intervalMs: 0,
      logger,
      run: async () => {
        passes += 1;
        throw new TypeError("cannot read properties of undefined");
      },
    });
    await vi.waitFor(() => expect(passes).toBeGreaterThan(50));
    await stop();
    expect(lines.map((l) => [l.level, l.msg])).toEqual([["error", "periodic task failed; retrying"]]);
  });
});
