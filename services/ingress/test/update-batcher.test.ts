import type { IncomingUpdate } from "@ratatoskr/db";
import { describe, expect, it } from "vitest";
import { createUpdateBatcher } from "../src/telegram/delivery/update-batcher.ts";

const update = (updateId: number): IncomingUpdate => ({ updateId, chatId: 1, payload: "{}" });

/** Lets the batcher's flush (queued as a microtask) and settled writes run. */
const settle = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

/** An insert the test finishes by hand, recording each batch it was given. */
function manualInsert() {
  const batches: number[][] = [];
  const pending: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
  const insert = (updates: readonly IncomingUpdate[]) =>
    new Promise<number>((resolve, reject) => {
      batches.push(updates.map((u) => u.updateId));
      pending.push({ resolve: () => resolve(updates.length), reject });
    });
  return { batches, pending, insert };
}

describe("update batcher", () => {
  it("writes a lone update at once and groups the ones arriving during that write", async () => {
    const db = manualInsert();
    const accept = createUpdateBatcher(db.insert);
    const first = accept(update(1));
    await settle();
    expect(db.batches).toEqual([[1]]);
    const rest = [2, 3, 4].map((id) => accept(update(id)));
    await settle();
    expect(db.batches).toEqual([[1]]);
    db.pending[0]!.resolve();
    await first;
    await settle();
    expect(db.batches).toEqual([[1], [2, 3, 4]]);
    db.pending[1]!.resolve();
    await Promise.all(rest);
  });

  it("rejects exactly the callers whose batch failed and goes on with the next", async () => {
    const db = manualInsert();
    const accept = createUpdateBatcher(db.insert);
    const first = accept(update(1));
    await settle();
    const second = accept(update(2));
    db.pending[0]!.reject(new Error("database away"));
    await expect(first).rejects.toThrow("database away");
    await settle();
    expect(db.batches).toEqual([[1], [2]]);
    db.pending[1]!.resolve();
    await expect(second).resolves.toBeUndefined();
  });

  it("caps a batch at maxBatch updates", async () => {
    const db = manualInsert();
    const accept = createUpdateBatcher(db.insert, 2);
    const first = accept(update(1));
    await settle();
    const all = [2, 3, 4, 5].map((id) => accept(update(id)));
    db.pending[0]!.resolve();
    await first;
    await settle();
    db.pending[1]!.resolve();
    await all[1];
    await settle();
    db.pending[2]!.resolve();
    await Promise.all(all);
    expect(db.batches).toEqual([[1], [2, 3], [4, 5]]);
  });
});
