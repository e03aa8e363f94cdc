import type { ClaimedUpdate } from "@ratatoskr/db";
import { describe, expect, it } from "vitest";
import { ClaimBatcher, type ClaimStore } from "../src/telegram/delivery/claim-batcher.ts";

const update = (updateId: number, chatId: number): ClaimedUpdate => ({
  updateId,
  chatId,
  payload: "{}",
  attempts: 0,
});

/** A store that records each statement and claims the next update of every chat asked for. */
function fakeStore(fail?: Error) {
  const statements: Array<{ finished: number[]; chats: number[] }> = [];
  const store: ClaimStore = {
    async finishAndClaimChats(finished, chats) {
      statements.push({ finished: [...finished], chats: [...chats] });
      if (fail) throw fail;
      return chats.map((chatId) => update(chatId * 10, chatId));
    },
  };
  return { store, statements };
}

describe("ClaimBatcher", () => {
  it("sends the claims and done marks asked for in one turn as one statement", async () => {
    const { store, statements } = fakeStore();
    const claims = new ClaimBatcher(store, 1_000);
    const answers = await Promise.all([claims.claim(1), claims.finishAndClaim(5, 2), claims.claim(3)]);
    expect(statements).toEqual([{ finished: [5], chats: [1, 2, 3] }]);
    expect(answers.map((a) => a?.updateId)).toEqual([10, 20, 30]);
  });

  it("gives a chat's claimed update to one asker only", async () => {
    const { store } = fakeStore();
    const claims = new ClaimBatcher(store, 1_000);
    const [first, second] = await Promise.all([claims.claim(4), claims.claim(4)]);
    expect([first?.updateId, second]).toEqual([40, null]);
  });

  it("fails every asker of a statement with its error (an outage), and works again after", async () => {
    const down = new ClaimBatcher(fakeStore(new Error("db away")).store, 1_000);
    const results = await Promise.allSettled([down.claim(1), down.finishAndClaim(9, 2)]);
    expect(results.map((r) => r.status === "rejected" && (r.reason as Error).message)).toEqual([
      "db away",
      "db away",
    ]);
    const { store, statements } = fakeStore();
    const claims = new ClaimBatcher(store, 1_000);
    await claims.claim(1);
    await claims.claim(2);
    expect(statements).toHaveLength(2);
  });
});
