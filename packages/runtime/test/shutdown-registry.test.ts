import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { ShutdownRegistry, type SignalSource } from "../src/index.ts";
import { captureLogger } from "./support/test-env.ts";
import { waitFor } from "./support/wait-for.ts";

function registryWithFakes(closerTimeoutMs?: number, now?: () => number) {
  const signals = new EventEmitter();
  const exits: number[] = [];
  const captured = captureLogger();
  const registry = new ShutdownRegistry({
    logger: captured.logger,
    exit: (code) => exits.push(code),
    signals: signals as SignalSource,
    ...(closerTimeoutMs ? { closerTimeoutMs } : {}),
    ...(now ? { now } : {}),
  });
  return { registry, signals, exits, captured };
}

describe("ShutdownRegistry", () => {
  it("closes phase by phase — intake, workers, queues, database, connections, telemetry — whatever the registration order", async () => {
    const { registry } = registryWithFakes();
    const order: string[] = [];
    const closer = (name: string) => async () => void order.push(name);
    registry.register("telemetry", "health server", closer("health server"));
    registry.register("connections", "redis", closer("redis"));
    registry.register("database", "prisma", closer("prisma"));
    registry.register("queues", "queues", closer("queues"));
    registry.register("workers", "dev worker", closer("dev worker"));
    registry.register("intake", "http", closer("http"));

    expect(await registry.shutdown("test")).toEqual({ clean: true, failed: [] });
    expect(order).toEqual(["http", "dev worker", "queues", "prisma", "redis", "health server"]);
  });

  it("runs the closers of one phase concurrently", async () => {
    const { registry } = registryWithFakes();
    let running = 0;
    let peak = 0;
    const worker = async () => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setImmediate(resolve));
      running -= 1;
    };
    registry.register("workers", "dev", worker);
    registry.register("workers", "review", worker);
    await registry.shutdown("test");
    expect(peak).toBe(2);
  });

  it("is idempotent: a second shutdown runs nothing again and gets the same result", async () => {
    const { registry } = registryWithFakes();
    let closes = 0;
    registry.register("connections", "redis", async () => void (closes += 1));
    const [a, b] = await Promise.all([registry.shutdown("one"), registry.shutdown("two")]);
    expect(a).toBe(b);
    expect(closes).toBe(1);
    expect(() => registry.register("intake", "late", async () => undefined)).toThrow(/already started/);
  });

  it("keeps going past a failing or hanging closer and reports the shutdown as unclean", async () => {
    const { registry } = registryWithFakes(50);
    const closed: string[] = [];
    registry.register("intake", "http", async () => {
      throw new Error("boom");
    });
    registry.register("database", "prisma", () => new Promise(() => {}));
    registry.register("connections", "redis", async () => void closed.push("redis"));
    expect(await registry.shutdown("test")).toEqual({ clean: false, failed: ["http", "prisma"] });
    expect(closed).toEqual(["redis"]);
  });

  it("installs signal handlers once and exits 0 after a clean shutdown", async () => {
    const { registry, signals, exits } = registryWithFakes();
    registry.installSignalHandlers();
    registry.installSignalHandlers();
    expect(signals.listenerCount("SIGTERM")).toBe(1);
    expect(signals.listenerCount("SIGINT")).toBe(1);
    signals.emit("SIGINT");
    await waitFor(() => exits.length > 0);
    expect(exits).toEqual([0]);
  });

  it("exits 1 after an unclean shutdown; pnpm's copy of the Ctrl-C is the same keypress, a signal a second later exits 1 at once", async () => {
    let now = 0;
    const { registry, signals, exits } = registryWithFakes(undefined, () => now);
    let finish: (() => void) | undefined;
    registry.register("workers", "slow", () => new Promise<void>((resolve) => (finish = resolve)));
    registry.register("connections", "redis", async () => {
      throw new Error("already closed");
    });
    registry.installSignalHandlers();
    signals.emit("SIGINT");
    now += 20;
    signals.emit("SIGINT"); // pnpm forwards its own copy of the one Ctrl-C
    expect(exits).toEqual([]);
    now += 1_500;
    signals.emit("SIGTERM");
    expect(exits).toEqual([1]);
    const finishSlow = await waitFor(() => finish, { what: "the slow closer to start" });
    finishSlow();
    await waitFor(() => exits.length > 1);
    expect(exits).toEqual([1, 1]);
  });
});
