import {
  IllegalTransitionError,
  QUEUE,
  isFinal,
  reduceTask,
  type TaskEffect,
  type TaskEvent,
  type TaskSnapshot,
} from "@ratatoskr/contracts";
import type { Task } from "../../generated/client.ts";
import { snapshotColumns, toSnapshot, type SnapshotColumns } from "../repositories/task-snapshot.mapper.ts";
import { notifyJobId } from "./notify-job-id.ts";

type Notify = Extract<TaskEffect, { type: "notify" }>;

/** A notification row a notify effect stores; its id is known only once written. */
export interface PlannedNotification {
  channel: "telegram" | "gitea";
  chatId: bigint | null;
  template: string;
  params: Notify["params"];
}

/** An outbox row; `notification` points into the plan's notifications when the job carries its id. */
export interface PlannedFollowUp {
  queue: string;
  jobId: string;
  data: Record<string, unknown>;
  notification?: number;
}

export interface TransitionPlan {
  next: TaskSnapshot;
  columns: SnapshotColumns & { finishedAt: Date | null };
  notifications: PlannedNotification[];
  followUps: PlannedFollowUp[];
}

/**
 * What a transition writes, decided without I/O: the reducer's verdict on the locked row, the
 * new columns, and the effects as rows. Throws IllegalTransitionError on a refusal.
 */
export function planTransition(row: Task, event: TaskEvent, now: Date): TransitionPlan {
  const result = reduceTask(toSnapshot(row), event);
  if (!result.ok) throw new IllegalTransitionError(result.refusal);
  const next = result.task;
  const after = { id: row.id, version: next.version };
  const channel = row.source === "gitea" ? "gitea" : "telegram";
  const notifications: PlannedNotification[] = [];
  const followUps: PlannedFollowUp[] = [];
  for (const effect of result.effects) {
    if (effect.type === "enqueue") {
      followUps.push({ queue: effect.job.queue, jobId: effect.job.jobId, data: { ...effect.job.data } });
      continue;
    }
    const index = notifications.length;
    notifications.push({
      channel,
      chatId: channel === "telegram" ? row.chatId : null,
      template: effect.template,
      params: effect.params,
    });
    followUps.push(
      channel === "telegram"
        ? {
            queue: QUEUE.notify,
            jobId: notifyJobId(after, index),
            // The chat rides along so the notifier takes the chat's lease before reading anything.
            data: row.chatId === null ? { v: 1, kind: "message" } : { v: 1, kind: "message", chatId: Number(row.chatId) },
            notification: index,
          }
        : {
            queue: QUEUE.notify,
            jobId: notifyJobId(after, index),
            data: { v: 1, kind: "gitea-status", taskId: row.id },
          },
    );
  }
  return {
    next,
    columns: { ...snapshotColumns(next), finishedAt: isFinal(next.status) ? (row.finishedAt ?? now) : null },
    notifications,
    followUps,
  };
}
