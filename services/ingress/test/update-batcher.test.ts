import type { IncomingUpdate } from "@ratatoskr/db";
import { describe, expect, it } from "vitest";
import { UpdateBatcher } from "../src/telegram/delivery/update-batcher.ts";

const update = (updateId: number): IncomingUpdate => ({ updateId, chatId: 1, payload: "{}" });

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

describe("UpdateBatcher", () => {
  it("writes a lone update at once and groups the ones arriving during that write", async () => {
    const db = manualInsert();
    const batcher = new UpdateBatcher(db.insert);
    const first = batcher.accept(update(1));
    expect(db.batches).toEqual([[1]]);
    const rest = [2, 3, 4].map((id) => batcher.accept(update(id)));
    expect(db.batches).toEqual([[1]]);
    db.pending[0]!.resolve();
    await first;
    await Promise.resolve();
    expect(db.batches).toEqual([[1], [2, 3, 4]]);
    db.pending[1]!.resolve();
    await Promise.all(rest);
  });

  it("rejects exactly the callers whose batch failed and goes on with the next", async () => {
    const db = manualInsert();
    const batcher = new UpdateBatcher(db.insert);
    const first = batcher.accept(update(1));
    const second = batcher.accept(update(2));
    db.pending[0]!.reject(new Error("database away"));
    await expect(first).rejects.toThrow("database away");
    await Promise.resolve();
    expect(db.batches).toEqual([[1], [2]]);
    db.pending[1]!.resolve();
    await expect(second).resolves.toBeUndefined();
  });

  it("caps a batch at maxBatch updates", async () => {
    const db = manualInsert();
    const batcher = new UpdateBatcher(db.insert, 2);
    const all = [1, 2, 3, 4, 5].map((id) => batcher.accept(update(id)));
    db.pending[0]!.resolve();
    await all[0];
    await Promise.resolve();
    db.pending[1]!.resolve();
    await all[2];
    await Promise.resolve();
    db.pending[2]!.resolve();
    await Promise.all(all);
    expect(db.batches).toEqual([[1], [2, 3], [4, 5]]);
  });
});
