/** A position update for one waiting command, as its notify job id: task, position, version. */
export interface PositionNotice {
  taskId: number;
  jobId: string;
}

/**
 * Per issue/PR, the position update last sent for each waiting command, so that a command joining
 * the line sends its own update alone instead of one per waiting command. In-process memory:
 * after a restart, or on another replica, an update is sent once more, which the notify job ids
 * make harmless.
 */
export interface ShownPositions {
  /** Those of `notices` not sent yet. */
  unsent(targetKey: string, notices: readonly PositionNotice[]): PositionNotice[];
  /** `notices` were sent; `whole`: they are the line's every waiting command (the others left it). */
  remember(targetKey: string, notices: readonly PositionNotice[], whole: boolean): void;
}

export function createShownPositions(): ShownPositions {
  const byTarget = new Map<string, Map<number, string>>();
  return {
    unsent(targetKey, notices) {
      const shown = byTarget.get(targetKey);
      return shown ? notices.filter((n) => shown.get(n.taskId) !== n.jobId) : [...notices];
    },
    remember(targetKey, notices, whole) {
      const shown = whole ? new Map<number, string>() : (byTarget.get(targetKey) ?? new Map<number, string>());
      for (const n of notices) shown.set(n.taskId, n.jobId);
      if (shown.size === 0) byTarget.delete(targetKey);
      else byTarget.set(targetKey, shown);
    },
  };
}
