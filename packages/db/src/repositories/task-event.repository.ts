import { LEGACY_EVENT_TYPES } from "@ratatoskr/contracts";
import type { TaskEvent } from "../../generated/client.ts";
import type { DbClient } from "../database.ts";

/** The audit trail applyTransition writes: one row per transition, by version. */
export class TaskEventRepository {
  constructor(private readonly db: DbClient) {}

  /** A task's events, oldest first, under today's names (a row an older release wrote reads as its successor). */
  async list(taskId: number): Promise<TaskEvent[]> {
    const rows = await this.db.taskEvent.findMany({ where: { taskId }, orderBy: { version: "asc" } });
    return rows.map((row) => (row.type in LEGACY_EVENT_TYPES ? { ...row, type: LEGACY_EVENT_TYPES[row.type]! } : row));
  }
}
