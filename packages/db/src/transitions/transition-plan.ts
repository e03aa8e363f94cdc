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
import { channelOf, deliveryJobData } from "./task-channel.ts";
import type { TaskPatch } from "./transition-types.ts";

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
  /** Columns the reducer set that are not the snapshot's (the failure reason); a caller's patch wins. */
  patch: TaskPatch;
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
  const notifications: PlannedNotification[] = [];
  const followUps: PlannedFollowUp[] = [];
  for (const effect of result.effects) {
    if (effect.type === "enqueue") followUps.push({ queue: effect.job.queue, jobId: effect.job.jobId, data: { ...effect.job.data } });
  }
  const notices = result.effects.filter((effect): effect is Notify => effect.type === "notify");
  const channel = channelOf(row);
  if (channel.channel === "gitea") {
    // The Gitea channel shows a command's state in its one status comment: every transition
    // refreshes it once, whatever the pipeline said (a postmortem replies on its own).
    notifications.push({ channel: "gitea", chatId: null, template: "command.status", params: {} });
    followUps.unshift({ queue: QUEUE.notify, jobId: notifyJobId(after, 0), data: deliveryJobData(channel, row.id) });
  } else {
    notices.forEach((effect, index) => {
      notifications.push({ channel: "telegram", chatId: channel.chatId, template: effect.template, params: effect.params });
      followUps.push({ queue: QUEUE.notify, jobId: notifyJobId(after, index), data: deliveryJobData(channel, row.id), notification: index });
    });
  }
  return {
    next,
    columns: { ...snapshotColumns(next), finishedAt: isFinal(next.status) ? (row.finishedAt ?? now) : null },
    patch: next.failureReason === undefined ? {} : { failureReason: next.failureReason },
    notifications,
    followUps,
  };
}
