import { EventEmitter } from "node:events";
import { createLogger, ShutdownRegistry } from "@ratatoskr/runtime";
import { describe, expect, it } from "vitest";
import { installProcessFaultHandlers } from "../src/start-host.ts";

function setup() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    service: "fault-test",
    level: "info",
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  const exits: number[] = [];
  const closed: string[] = [];
  const shutdown = new ShutdownRegistry({ logger, exit: () => undefined });
  shutdown.register("workers", "jobs", async () => void closed.push("jobs"));
  shutdown.register("connections", "redis", async () => void closed.push("redis"));
  const target = new EventEmitter();
  installProcessFaultHandlers(logger, shutdown, (code) => exits.push(code), target as unknown as NodeJS.Process);
  return { lines, exits, closed, target };
}

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met within 5 s");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("process-wide fault handlers", () => {
  it("log an unhandled rejection, shut down in order and exit 1", async () => {
    const { lines, exits, closed, target } = setup();
    target.emit("unhandledRejection", new Error("nobody awaited me"));
    await until(() => exits.length > 0);
    expect(exits).toEqual([1]);
    expect(closed).toEqual(["jobs", "redis"]);
    const fatal = lines.find((l) => l["msg"] === "unhandled promise rejection; shutting down");
    expect(fatal?.["level"]).toBe("fatal");
    expect(JSON.stringify(fatal)).toContain("nobody awaited me");
  });

  it("treat an uncaught exception the same way, and a second fault does not shut down twice", async () => {
    const { exits, closed, target, lines } = setup();
    target.emit("uncaughtException", new Error("boom"));
    target.emit("unhandledRejection", new Error("and another"));
    await until(() => exits.length > 0);
    await new Promise((r) => setTimeout(r, 50));
    expect(exits).toEqual([1]);
    expect(closed).toEqual(["jobs", "redis"]);
    expect(lines.filter((l) => String(l["msg"]).endsWith("; shutting down")).map((l) => l["msg"])).toEqual([
      "uncaught exception; shutting down",
      "unhandled promise rejection; shutting down",
    ]);
  });
});
