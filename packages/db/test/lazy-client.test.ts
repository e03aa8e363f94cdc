import { describe, expect, it } from "vitest";
import { lazyObject } from "../src/lazy-client.ts";

class Counter {
  #count = 0;
  label = "counter";
  increment(by = 1): number {
    this.#count += by;
    return this.#count;
  }
}

describe("lazyObject (how the database defers building its Prisma client)", () => {
  it("builds nothing until a property is read, then builds once", () => {
    let builds = 0;
    const { proxy, created } = lazyObject(() => {
      builds++;
      return new Counter();
    });
    expect(builds).toBe(0);
    expect(created()).toBe(false);
    expect(proxy.label).toBe("counter");
    proxy.increment();
    expect(builds).toBe(1);
    expect(created()).toBe(true);
  });

  it("runs methods on the real object, so its private fields work, and keeps its state", () => {
    const { proxy } = lazyObject(() => new Counter());
    const increment = proxy.increment;
    expect(proxy.increment(2)).toBe(2);
    expect(increment(3)).toBe(5);
    expect("increment" in proxy).toBe(true);
  });
});
