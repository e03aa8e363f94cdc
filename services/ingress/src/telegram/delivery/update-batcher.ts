import { createGroupCommit, type IncomingUpdate } from "@ratatoskr/db";

/**
 * Group commit for the webhook: while one insert is on its way, the updates that arrive meanwhile
 * wait and go together in the next one. At low load every update is written at once, alone; at
 * high load one statement carries many, so intake keeps up with Telegram's bursts (issue 7 aim).
 * Each caller's promise settles with its own batch: resolved once its update is durable, rejected
 * when that insert failed (then nothing of the batch was taken and Telegram delivers it again).
 */
export function createUpdateBatcher(
  insert: (updates: readonly IncomingUpdate[]) => Promise<unknown>,
  maxBatch = 500,
): (update: IncomingUpdate) => Promise<void> {
  return createGroupCommit<IncomingUpdate, void>({
    maxBatch,
    maxInFlight: 1,
    write: async (updates) => {
      await insert(updates);
      return updates.map(() => Promise.resolve());
    },
  });
}
