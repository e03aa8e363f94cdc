import type { TaskEvent } from "../../generated/client.ts";
import type { DbClient } from "../database.ts";

/** The audit trail applyTransition writes: one row per transition, by version. */
export class TaskEventRepository {
  constructor(private readonly db: DbClient) {}

  list(taskId: number): Promise<TaskEvent[]> {
    return this.db.taskEvent.findMany({ where: { taskId }, orderBy: { version: "asc" } });
  }
}
