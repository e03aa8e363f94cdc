import type { TaskEvent } from "@ratatoskr/contracts";
import type { FollowUp, Prisma, PrismaClient } from "../../generated/client.ts";
import type { DbClient } from "../database.ts";
import { sqlPoolOf } from "../sql/sql-pool.ts";
import { applyTransitionSql, forgetTaskRow } from "./sql-transition.ts";
import { planTransition, type TransitionPlan } from "./transition-plan.ts";
import { assertExpectedVersion, TaskNotFoundError, type AppliedTransition, type TaskPatch } from "./transition-types.ts";

export { TaskNotFoundError, type AppliedTransition, type TaskPatch };

export interface ApplyTransitionOptions {
  patch?: TaskPatch;
  /** More writes that must commit or roll back with the transition (e.g. marking turns analysed). */
  alongside?: (tx: DbClient) => Promise<void>;
  /**
   * Writes only if the task is still at this version (what a sweep saw when it judged the task):
   * one conditional write. Otherwise nothing is written and IllegalTransitionError "moved-on" is
   * thrown.
   */
  expectVersion?: number;
}

/**
 * The only way a task's status changes. Atomically: run the reducer on the task row, write the
 * new state, the audit event, and the outbox rows for every effect. A refusal throws
 * IllegalTransitionError and writes nothing.
 *
 * The hot path runs in plain SQL on the pool under the Prisma adapter: transitions of different
 * tasks asked for at once share one version-guarded statement and one commit (group commit),
 * planned on the rows this process last wrote or on a fresh read, each caller answered alone;
 * transitions of one task run in the order asked for. A transition with writes `alongside`
 * (Prisma calls) runs in a locked Prisma transaction instead.
 */
export async function applyTransition(
  prisma: PrismaClient,
  taskId: number,
  event: TaskEvent,
  options: ApplyTransitionOptions = {},
): Promise<AppliedTransition> {
  const pool = sqlPoolOf(prisma);
  if (pool && !options.alongside) return applyTransitionSql(pool, taskId, event, options.patch, options.expectVersion);
  if (pool) forgetTaskRow(pool, taskId);
  return applyTransitionPrisma(prisma, taskId, event, options);
}

async function applyTransitionPrisma(
  prisma: PrismaClient,
  taskId: number,
  event: TaskEvent,
  options: ApplyTransitionOptions,
): Promise<AppliedTransition> {
  return prisma.$transaction(async (tx) => {
    // The row lock serializes concurrent transitions of one task; others proceed in parallel.
    const locked = await tx.$queryRaw<{ id: number }[]>`SELECT id FROM tasks WHERE id = ${taskId} FOR UPDATE`;
    if (locked.length === 0) throw new TaskNotFoundError(taskId);
    const row = await tx.task.findUniqueOrThrow({ where: { id: taskId } });
    assertExpectedVersion(row, event, options.expectVersion);
    const plan = planTransition(row, event, new Date());

    const task = await tx.task.update({
      where: { id: taskId },
      data: { ...plan.columns, ...plan.patch, ...options.patch },
    });
    await tx.taskEvent.create({
      data: {
        taskId,
        version: plan.next.version,
        type: event.type,
        payload: event as unknown as Prisma.InputJsonObject,
        fromStatus: row.status,
        toStatus: plan.next.status,
      },
    });
    const followUps = await writeEffects(tx, taskId, plan);
    await options.alongside?.(tx);
    return { task, followUps };
  });
}

async function writeEffects(tx: DbClient, taskId: number, plan: TransitionPlan): Promise<FollowUp[]> {
  if (plan.followUps.length === 0) return [];
  const notificationIds: number[] = [];
  for (const n of plan.notifications) {
    const created = await tx.notification.create({ data: { taskId, ...n } });
    notificationIds.push(created.id);
  }
  return tx.followUp.createManyAndReturn({
    data: plan.followUps.map(({ queue, jobId, data, notification }) => ({
      taskId,
      queue,
      jobId,
      data: (notification === undefined
        ? data
        : { ...data, notificationId: notificationIds[notification] }) as Prisma.InputJsonObject,
    })),
  });
}
