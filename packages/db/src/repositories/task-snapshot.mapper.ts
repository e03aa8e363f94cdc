import type {
  BudgetStep,
  GiteaCommandKind,
  TaskSnapshot,
  TaskSource,
} from "@ratatoskr/contracts";
import { storedStatus } from "@ratatoskr/contracts";
import type { Task } from "../../generated/client.ts";

/** Snapshot columns as written back after a transition (id and source never change). */
export type SnapshotColumns = Omit<TaskSnapshot, "id" | "source" | "command" | "failureReason">;

/** The door a task came through (the column holds only the state machine's sources). */
export function sourceOf(row: Pick<Task, "source">): TaskSource {
  return row.source as TaskSource;
}

/** The part of a task row the state machine reads. */
export function toSnapshot(row: Task): TaskSnapshot {
  const snapshot: TaskSnapshot = {
    id: row.id,
    source: sourceOf(row),
    status: storedStatus(row.status),
    version: row.version,
    turnCount: row.turnCount,
    pendingTurns: row.pendingTurns,
    analysing: row.analysing,
    skipRequested: row.skipRequested,
    round: row.round,
    maxTurns: row.maxTurns,
    maxRounds: row.maxRounds,
    budgetUsd: row.budgetUsd,
    pausedStep: row.pausedStep as BudgetStep | null,
  };
  if (row.source === "gitea" && row.commandKind && row.targetType && row.targetKey) {
    snapshot.command = {
      kind: row.commandKind as GiteaCommandKind,
      target: row.targetType as "issue" | "pr",
      targetKey: row.targetKey,
    };
  }
  return snapshot;
}

export function snapshotColumns(snapshot: TaskSnapshot): SnapshotColumns {
  const { status, version, turnCount, pendingTurns, analysing, skipRequested, round, maxTurns, maxRounds } =
    snapshot;
  // Optional fields left out by a reducer keep their column as it is (undefined is not written).
  const { budgetUsd, pausedStep } = snapshot;
  return {
    status,
    version,
    turnCount,
    pendingTurns,
    analysing,
    skipRequested,
    round,
    maxTurns,
    maxRounds,
    budgetUsd,
    pausedStep,
  };
}
