/**
 * Per issue/PR, the position updates already sent for its waiting commands (as notify job ids:
 * task, position, version). A dispatch that moved nobody (a command joined the end of the line)
 * then sends the newcomer's alone instead of one per waiting command: with a long line on one
 * issue that was a Redis call per waiting command for every command that arrived.
 * In-process memory: after a restart, or on another replica, each is sent once more, which the
 * notify job ids make harmless.
 */
export interface ShownPositions {
  /** Those of `jobIds` not sent yet for `targetKey`. */
  unsent(targetKey: string, jobIds: readonly string[]): string[];
  /** `jobIds` are now what `targetKey`'s line shows (those who left the line are forgotten). */
  remember(targetKey: string, jobIds: readonly string[]): void;
}

export function createShownPositions(): ShownPositions {
  const byTarget = new Map<string, Set<string>>();
  return {
    unsent(targetKey, jobIds) {
      const shown = byTarget.get(targetKey);
      return shown ? jobIds.filter((id) => !shown.has(id)) : [...jobIds];
    },
    remember(targetKey, jobIds) {
      if (jobIds.length === 0) byTarget.delete(targetKey);
      else byTarget.set(targetKey, new Set(jobIds));
    },
  };
}
