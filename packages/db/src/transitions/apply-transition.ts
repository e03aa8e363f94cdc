import {
  IllegalTransitionError,
  isFinal,
  reduceTask,
  type TaskEffect,
  type TaskEvent,
} from "@ratatoskr/contracts";
import type { FollowUp, Prisma, PrismaClient, Task } from "../../generated/client.ts";
import type { DbClient } from "../database.ts";
import { snapshotColumns, toSnapshot } from "../repositories/task-snapshot.mapper.ts";
import { effectRows } from "./effect-rows.ts";

/** Non-snapshot columns a caller may change in the same transaction as the status. */
export type TaskPatch = Partial<
  Pick<
    Task,
    | "title"
    | "goal"
    | "repos"
    | "why"
    | "acceptanceCriteria"
    | "branch"
    | "prUrl"
    | "agentSessionId"
    | "agentServerUrl"
    | "failureReason"
    | "statusCommentId"
    | "locale"
    | "finishedAt"
  >
>;

export interface ApplyTransitionOptions {
  patch?: TaskPatch;
  /** More writes that must commit or roll back with the transition (e.g. marking turns analysed). */
  alongside?: (tx: DbClient) => Promise<void>;
}

export interface AppliedTransition {
  task: Task;
  /** Outbox rows to hand to the follow-up dispatcher once this call has returned (committed). */
  followUps: FollowUp[];
}

export class TaskNotFoundError extends Error {
  override readonly name = "TaskNotFoundError";
  constructor(readonly taskId: number) {
    super(`task ${taskId} does not exist`);
  }
}

/**
 * The only way a task's status changes. In one transaction: lock the row, run the reducer,
 * write the new state, the audit event, and the outbox rows for every effect. A refusal throws
 * IllegalTransitionError and writes nothing.
 */
export async function applyTransition(
  prisma: PrismaClient,
  taskId: number,
  event: TaskEvent,
  options: ApplyTransitionOptions = {},
): Promise<AppliedTransition> {
  return prisma.$transaction(async (tx) => {
    // The row lock serializes concurrent transitions of one task; others proceed in parallel.
    const locked = await tx.$queryRaw<{ id: number }[]>`SELECT id FROM tasks WHERE id = ${taskId} FOR UPDATE`;
    if (locked.length === 0) throw new TaskNotFoundError(taskId);
    const row = await tx.task.findUniqueOrThrow({ where: { id: taskId } });

    const result = reduceTask(toSnapshot(row), event);
    if (!result.ok) throw new IllegalTransitionError(result.refusal);
    const next = result.task;

    const task = await tx.task.update({
      where: { id: taskId },
      data: {
        ...snapshotColumns(next),
        finishedAt: isFinal(next.status) ? (row.finishedAt ?? new Date()) : null,
        ...options.patch,
      },
    });
    await tx.taskEvent.create({
      data: {
        taskId,
        version: next.version,
        type: event.type,
        payload: event as unknown as Prisma.InputJsonObject,
        fromStatus: row.status,
        toStatus: next.status,
      },
    });
    const followUps = await writeEffects(tx, task, result.effects);
    await options.alongside?.(tx);
    return { task, followUps };
  });
}

async function writeEffects(tx: DbClient, task: Task, effects: TaskEffect[]): Promise<FollowUp[]> {
  const rows = await effectRows(tx, task, effects);
  if (rows.length === 0) return [];
  return tx.followUp.createManyAndReturn({ data: rows });
}
