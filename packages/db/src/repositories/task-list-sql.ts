import type pg from "pg";
import type { Task } from "../../generated/client.ts";
import { camelRow, prismaLikeTypes } from "../sql/sql-pool.ts";

/**
 * Tasks by source and status in plain SQL on the pg pool: the Gitea front door's periodic sweeps
 * (running-command recovery, status refresh) read this while idle, and through Prisma it would
 * load its query compiler into an idle process. Rows come back exactly as Prisma's would.
 */
const LIST_BY_STATUS = "SELECT * FROM tasks WHERE source = $1 AND status = ANY($2::text[]) ORDER BY id";

export async function listTasksByStatus(pool: pg.Pool, source: string, statuses: readonly string[]): Promise<Task[]> {
  const { rows } = await pool.query({
    name: "rt-tasks-by-status",
    text: LIST_BY_STATUS,
    values: [source, [...statuses]],
    types: prismaLikeTypes,
  });
  return rows.map((row: Record<string, unknown>) => camelRow<Task>(row));
}

const WHICH_IN_STATUS = "SELECT id FROM tasks WHERE id = ANY($1::int[]) AND status = ANY($2::text[]) ORDER BY id";

/** Which of `ids` are in one of `statuses` (the workspace sweep asks this of its trees while idle). */
export async function idsInStatus(pool: pg.Pool, ids: readonly number[], statuses: readonly string[]): Promise<number[]> {
  const { rows } = await pool.query<{ id: number }>({ name: "rt-task-ids-in-status", text: WHICH_IN_STATUS, values: [[...ids], [...statuses]] });
  return rows.map((row) => row.id);
}
