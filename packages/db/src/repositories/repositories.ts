import type { TaskEvent as ReducerEvent } from "@ratatoskr/contracts";
import type { PrismaClient } from "../../generated/client.ts";
import {
  applyTransition,
  type AppliedTransition,
  type ApplyTransitionOptions,
} from "../transitions/apply-transition.ts";
import { AgentTraceRepository } from "./agent-trace.repository.ts";
import { DialogueTurnRepository } from "./dialogue-turn.repository.ts";
import { GiteaSweepCursorRepository } from "./gitea-sweep-cursor.repository.ts";
import { NotificationRepository } from "./notification.repository.ts";
import { TaskEventRepository } from "./task-event.repository.ts";
import { TaskRepository } from "./task.repository.ts";
import { sqlPoolOf } from "../sql/sql-pool.ts";
import { TelegramUpdateRepository } from "./telegram-update.repository.ts";

export interface Repositories {
  tasks: TaskRepository;
  turns: DialogueTurnRepository;
  traces: AgentTraceRepository;
  events: TaskEventRepository;
  notifications: NotificationRepository;
  sweepCursors: GiteaSweepCursorRepository;
  telegramUpdates: TelegramUpdateRepository;
  /** applyTransition bound to this client. */
  applyTransition(
    taskId: number,
    event: ReducerEvent,
    options?: ApplyTransitionOptions,
  ): Promise<AppliedTransition>;
}

/** Every repository over one client; build it once per process (or test) and pass it down. */
export function createRepositories(prisma: PrismaClient): Repositories {
  const pool = sqlPoolOf(prisma);
  return {
    tasks: new TaskRepository(prisma, pool),
    turns: new DialogueTurnRepository(prisma),
    traces: new AgentTraceRepository(prisma),
    events: new TaskEventRepository(prisma),
    notifications: new NotificationRepository(prisma, pool),
    sweepCursors: new GiteaSweepCursorRepository(prisma),
    telegramUpdates: new TelegramUpdateRepository(prisma, pool),
    applyTransition: (taskId, event, options) => applyTransition(prisma, taskId, event, options),
  };
}
