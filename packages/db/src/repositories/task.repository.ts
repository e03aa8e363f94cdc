import { GITEA_STATUSES, isFinal, LEGACY_EVENT_TYPES, type GiteaCommandKind, type TaskEventType, type TaskStatus } from "@ratatoskr/contracts";
import type { Task } from "../../generated/client.ts";
import type pg from "pg";
import type { DbClient } from "../database.ts";
import { camelRow, prismaLikeTypes } from "../sql/sql-pool.ts";
import { rememberTaskRow } from "../transitions/sql-transition.ts";
import { idsInStatus, listTasksByStatus } from "./task-list-sql.ts";

export interface NewTelegramTask {
  chatId: number | bigint;
  userId?: number | bigint | null;
  /** The forum topic the request came from: the task's messages go back there. */
  threadId?: number | null;
  locale?: string | null;
  maxTurns: number;
  maxRounds: number;
  /** TASK_BUDGET_USD when the task was opened; null or absent = no budget (P5). */
  budgetUsd?: number | null;
}

export interface NewGiteaTask {
  repoOwner: string;
  repoName: string;
  targetType: "issue" | "pr";
  targetNumber: number;
  commandKind: GiteaCommandKind;
  commandMessage?: string | null;
  requesterLogin: string;
  /** The `/agent` comment; unique with the repository, so one comment makes one task. */
  commentId: number | bigint;
  maxRounds: number;
  /** Gitea commands have no dialogue; only plan iterations count turns. */
  maxTurns?: number;
}

export interface DraftFields {
  title?: string | null;
  goal?: string | null;
  repos?: string[];
  why?: string | null;
  acceptanceCriteria?: string[];
}

export interface RunFields {
  branch?: string | null;
  prUrl?: string | null;
  agentSessionId?: string | null;
  agentServerUrl?: string | null;
}

/** Gitea statuses that still hold a place in a target's queue (G4, G7). */
const QUEUED_OR_RUNNING: TaskStatus[] = GITEA_STATUSES.filter((status) => !isFinal(status));

/** `<owner>/<repo>#<number>`: the key commands of one issue/PR are ordered by. */
export function giteaTargetKey(repoOwner: string, repoName: string, targetNumber: number): string {
  return `${repoOwner}/${repoName}#${targetNumber}`;
}

/** Task rows: creation, lookups, and fields outside the state machine. Status changes go through applyTransition. */
export class TaskRepository {
  /** `pool`: the pg pool under the client, for the reads idle sweeps make (see task-list-sql.ts). */
  constructor(
    private readonly db: DbClient,
    private readonly pool?: pg.Pool,
  ) {}

  /** A new dialogue (status `draft`) that becomes the chat's active task. */
  createTelegramTask(input: NewTelegramTask): Promise<Task> {
    return this.db.task.create({
      data: {
        source: "telegram",
        status: "draft",
        chatId: input.chatId,
        userId: input.userId ?? null,
        threadId: input.threadId ?? null,
        locale: input.locale ?? null,
        maxTurns: input.maxTurns,
        maxRounds: input.maxRounds,
        budgetUsd: input.budgetUsd ?? null,
        // Nested write: task and chat pointer change in one statement batch, atomically.
        activeInChat: {
          connectOrCreate: { where: { chatId: input.chatId }, create: { chatId: input.chatId } },
        },
      },
    });
  }

  /** A stored `/agent` command (status `received`), waiting to be authorized. */
  createGiteaTask(input: NewGiteaTask): Promise<Task> {
    return this.db.task.create({
      data: {
        source: "gitea",
        status: "received",
        repoOwner: input.repoOwner,
        repoName: input.repoName,
        targetType: input.targetType,
        targetNumber: input.targetNumber,
        targetKey: giteaTargetKey(input.repoOwner, input.repoName, input.targetNumber),
        commandKind: input.commandKind,
        commandMessage: input.commandMessage ?? null,
        requesterLogin: input.requesterLogin,
        commentId: input.commentId,
        maxTurns: input.maxTurns ?? 0,
        maxRounds: input.maxRounds,
      },
    });
  }

  /** On the pool when there is one: intake reads a task per command, and Prisma's query costs more CPU. */
  async findById(id: number): Promise<Task | null> {
    if (!this.pool) return this.db.task.findUnique({ where: { id } });
    const { rows } = await this.pool.query<Record<string, unknown>>({
      name: "rt-task-read-one",
      text: "SELECT * FROM tasks WHERE id = $1",
      values: [id],
      types: prismaLikeTypes,
    });
    return rows[0] ? camelRow<Task>(rows[0]) : null;
  }

  /** The task of an `/agent` comment: a comment is known by its repository and its id. */
  findByComment(repoOwner: string, repoName: string, commentId: number | bigint): Promise<Task | null> {
    return this.db.task.findUnique({ where: { repoOwner_repoName_commentId: { repoOwner, repoName, commentId } } });
  }

  /** The task free text in this chat belongs to: the latest started one, unless it finished. */
  async findActiveByChat(chatId: number | bigint): Promise<Task | null> {
    const chat = await this.db.telegramChat.findUnique({ where: { chatId }, include: { activeTask: true } });
    const task = chat?.activeTask;
    return task && !isFinal(task.status as TaskStatus) ? task : null;
  }

  /** Makes `taskId` the task this chat's free text goes to (e.g. Edit pressed on an older draft). */
  async setActiveTask(chatId: number | bigint, taskId: number): Promise<void> {
    const id = BigInt(chatId);
    await this.db.telegramChat.upsert({
      where: { chatId: id },
      create: { chatId: id, activeTaskId: taskId },
      update: { activeTaskId: taskId },
    });
  }

  /** Commands of one issue/PR that are not final, in receive order: the running one, then the queue. */
  listTargetQueue(targetKey: string): Promise<Task[]> {
    return this.db.task.findMany({
      where: { targetKey, status: { in: QUEUED_OR_RUNNING } },
      orderBy: { id: "asc" },
    });
  }

  /** The newest command of an issue/PR older than `beforeId` in `status`, e.g. the timed-out one a continue resumes. */
  findNewestInTarget(targetKey: string, status: TaskStatus, beforeId: number): Promise<Task | null> {
    return this.db.task.findFirst({ where: { targetKey, status, id: { lt: beforeId } }, orderBy: { id: "desc" } });
  }

  /** E.g. every Gitea command still `running` at start-up (G6). */
  listByStatus(source: "telegram" | "gitea", statuses: TaskStatus[]): Promise<Task[]> {
    if (this.pool) return listTasksByStatus(this.pool, source, statuses);
    return this.db.task.findMany({ where: { source, status: { in: statuses } }, orderBy: { id: "asc" } });
  }

  /** Which of `ids` are in one of `statuses`, in id order (unknown ids are left out). */
  async whichInStatus(ids: readonly number[], statuses: readonly TaskStatus[]): Promise<number[]> {
    if (ids.length === 0) return [];
    if (this.pool) return idsInStatus(this.pool, ids, statuses);
    const rows = await this.db.task.findMany({ where: { id: { in: [...ids] }, status: { in: [...statuses] } }, select: { id: true }, orderBy: { id: "asc" } });
    return rows.map((row) => row.id);
  }

  updateDraft(id: number, draft: DraftFields): Promise<Task> {
    return this.db.task.update({ where: { id }, data: draft });
  }

  /** Branch, PR and the agent session a person can `/continue` or `/attach` to. */
  async updateRun(id: number, run: RunFields): Promise<Task> {
    const task = await this.db.task.update({ where: { id }, data: run });
    if (this.pool) rememberTaskRow(this.pool, task);
    return task;
  }

  /**
   * The plan of the latest finished `/agent plan`/`iterate` of an issue (`plan.drafted`
   * events of commands that ended in success), for `/agent implement` to follow; undefined when none.
   * Also under the names an older process may still write during a rolling upgrade.
   */
  async latestPlan(targetKey: string): Promise<string | undefined> {
    const event = await this.db.taskEvent.findFirst({
      where: { type: { in: namesOf("plan.drafted") }, task: { targetKey, status: { in: ["success", "succeeded"] } } },
      orderBy: [{ taskId: "desc" }, { version: "desc" }],
    });
    const plan = (event?.payload as { plan?: unknown } | null)?.plan;
    return typeof plan === "string" ? plan : undefined;
  }

  setStatusComment(id: number, statusCommentId: number | bigint): Promise<Task> {
    return this.db.task.update({ where: { id }, data: { statusCommentId } });
  }

  /** The status comment now shows the task at `version` (never moved back; `updated_at` untouched). */
  async markStatusCommentShown(id: number, version: number): Promise<void> {
    if (this.pool) await this.pool.query({ name: "rt-status-comment-shown", text: MARK_STATUS_COMMENT_SHOWN, values: [id, version] });
    else await this.db.$executeRawUnsafe(MARK_STATUS_COMMENT_SHOWN, id, version);
  }

  /**
   * Gitea commands whose status comment shows an older version than the task's, changed between
   * `changedAfter` and `changedBefore` (their update was lost with Redis, or is on its way), not
   * running (the running ones are refreshed anyway), oldest first.
   */
  async listLaggingStatusComments(changedAfter: Date, changedBefore: Date, limit: number): Promise<number[]> {
    const values = [changedAfter.toISOString(), changedBefore.toISOString(), limit];
    const rows = this.pool
      ? (await this.pool.query<{ id: number }>({ name: "rt-lagging-status-comments", text: LAGGING_STATUS_COMMENTS, values })).rows
      : await this.db.$queryRawUnsafe<Array<{ id: number }>>(LAGGING_STATUS_COMMENTS, ...values);
    return rows.map((row) => Number(row.id));
  }
}

const MARK_STATUS_COMMENT_SHOWN = `UPDATE tasks SET status_comment_version = $2
  WHERE id = $1 AND (status_comment_version IS NULL OR status_comment_version < $2)`;

const LAGGING_STATUS_COMMENTS = `SELECT id FROM tasks
  WHERE source = 'gitea' AND status <> 'running' AND status_comment_version IS DISTINCT FROM version
    AND updated_at > $1::timestamp AND updated_at < $2::timestamp
  ORDER BY id LIMIT $3`;

/** An event type and the legacy names that mean it. */
const namesOf = (type: TaskEventType): string[] => [type, ...Object.keys(LEGACY_EVENT_TYPES).filter((legacy) => LEGACY_EVENT_TYPES[legacy] === type)];
