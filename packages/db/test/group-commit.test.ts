import { describe, expect, it } from "vitest";
import { createGroupCommit } from "../src/sql/group-commit.ts";

interface Item {
  key: string;
  value: number;
}

/** A write that records its batches and answers each item with its value, until told to finish. */
function recordingWrite() {
  const batches: number[][] = [];
  const gates: Array<() => void> = [];
  return {
    batches,
    /** Lets the oldest unfinished write return. */
    finishOne: () => gates.shift()?.(),
    write: async (items: readonly Item[]) => {
      batches.push(items.map((i) => i.value));
      await new Promise<void>((resolve) => gates.push(resolve));
      return items.map((i) => Promise.resolve(i.value));
    },
  };
}

/** Lets microtasks and timers queued so far run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("createGroupCommit", () => {
  it("writes items of one tick together and those arriving meanwhile in the next batch", async () => {
    const rec = recordingWrite();
    const submit = createGroupCommit({ write: rec.write, maxBatch: 10, maxInFlight: 1 });

    const first = [1, 2, 3].map((value) => submit({ key: `k${value}`, value }));
    await settle();
    const second = [4, 5].map((value) => submit({ key: `k${value}`, value }));
    await settle();
    expect(rec.batches).toEqual([[1, 2, 3]]);

    rec.finishOne();
    expect(await Promise.all(first)).toEqual([1, 2, 3]);
    await settle();
    rec.finishOne();
    expect(await Promise.all(second)).toEqual([4, 5]);
    expect(rec.batches).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
  });

  it("with gatherTurn, batches items that arrive from callbacks of one loop turn, not only of one tick", async () => {
    const batchesOf = async (gatherTurn: boolean) => {
      const rec = recordingWrite();
      const submit = createGroupCommit({ write: rec.write, maxBatch: 10, maxInFlight: 1, gatherTurn });
      // Two timers due together run in one turn, each callback its own tick.
      const submitted = await new Promise<Promise<number>[]>((resolve) => {
        const all: Promise<number>[] = [];
        setTimeout(() => all.push(submit({ key: "a", value: 1 })), 0);
        setTimeout(() => resolve([...all, submit({ key: "b", value: 2 })]), 0);
      });
      await settle();
      rec.finishOne();
      await settle();
      rec.finishOne();
      await Promise.all(submitted);
      return rec.batches;
    };

    expect(await batchesOf(true)).toEqual([[1, 2]]);
    expect(await batchesOf(false)).toEqual([[1], [2]]);
  });

  it("never puts two items of one key in a batch, and writes them in order of arrival", async () => {
    const rec = recordingWrite();
    const submit = createGroupCommit({
      write: rec.write,
      keyOf: (item: Item) => item.key,
      maxBatch: 10,
      maxInFlight: 2,
    });

    const all = [
      submit({ key: "a", value: 1 }),
      submit({ key: "b", value: 2 }),
      submit({ key: "a", value: 3 }),
      submit({ key: "a", value: 4 }),
    ];
    for (let i = 0; i < 3; i++) {
      await settle();
      rec.finishOne();
    }

    expect(await Promise.all(all)).toEqual([1, 2, 3, 4]);
    expect(rec.batches).toEqual([[1, 2], [3], [4]]);
  });

  it("fails every item of a batch whose write throws, and goes on with the next", async () => {
    let calls = 0;
    const submit = createGroupCommit<Item, number>({
      write: async (items) => {
        if (calls++ === 0) throw new Error("connection refused");
        return items.map((i) => Promise.resolve(i.value));
      },
      maxBatch: 10,
      maxInFlight: 1,
    });

    const failed = await Promise.allSettled([submit({ key: "a", value: 1 }), submit({ key: "b", value: 2 })]);
    expect(failed.map((r) => r.status === "rejected" && (r.reason as Error).message)).toEqual([
      "connection refused",
      "connection refused",
    ]);
    await expect(submit({ key: "a", value: 3 })).resolves.toBe(3);
  });

  it("does not hold the next batch back for an item still settling on its own", async () => {
    let finishSlow: (value: number) => void = () => undefined;
    const slow = new Promise<number>((resolve) => (finishSlow = resolve));
    const batches: number[][] = [];
    const submit = createGroupCommit<Item, number>({
      write: async (items) => {
        batches.push(items.map((i) => i.value));
        return items.map((i) => (i.value === 1 ? slow : Promise.resolve(i.value)));
      },
      keyOf: (item) => item.key,
      maxBatch: 10,
      maxInFlight: 1,
    });

    const pending = submit({ key: "a", value: 1 });
    const behindIt = submit({ key: "a", value: 3 });
    await expect(submit({ key: "b", value: 2 })).resolves.toBe(2);
    expect(batches).toEqual([[1, 2]]);

    finishSlow(1);
    expect(await Promise.all([pending, behindIt])).toEqual([1, 3]);
    expect(batches).toEqual([[1, 2], [3]]);
  });
});
