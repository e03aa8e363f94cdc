import type { GiteaCommandKind } from "@ratatoskr/contracts";
import type { Database, FollowUp } from "@ratatoskr/db";
import { isPoisonSqlError } from "./poison-sql.ts";

/** A new `/agent` comment, as the webhook or the sweep found it. */
export interface IncomingCommand {
  owner: string;
  repo: string;
  target: "issue" | "pr";
  number: number;
  commentId: number;
  author: string;
  /** Null for a missing or unknown subcommand: intake answers it with the usage. */
  kind: GiteaCommandKind | null;
  /** The message after the command, or for a usage answer the word that was given. */
  message: string;
  /** `X-Gitea-Delivery`, or `sweep-<commentId>` when the sweep found it. */
  deliveryId: string;
  event: string;
}

export type AcceptOutcome =
  { status: "accepted"; taskId: number; followUps: FollowUp[] } | { status: "duplicate" };

/**
 * One statement for a batch of commands: their tasks (unique on the comment id, so Redeliver and
 * concurrent duplicates insert nothing), their delivery records, and the outbox rows for routing
 * each and for its status comment. Nothing slow happens here; the caller dispatches the rows after.
 */
const ACCEPT = `
WITH input AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[],
    $8::bigint[], $9::int[], $10::text[], $11::text[])
    AS i(owner, repo, target, number, kind, message, author, comment_id, max_rounds, delivery_id, event)
), t AS (
  INSERT INTO tasks (source, status, repo_owner, repo_name, target_type, target_number, target_key,
    command_kind, command_message, requester_login, comment_id, max_turns, max_rounds, created_at, updated_at)
  SELECT 'gitea', 'received', owner, repo, target, number, owner || '/' || repo || '#' || number, kind, message,
    author, comment_id, 0, max_rounds, $12::timestamp, $12::timestamp
  FROM input
  ON CONFLICT (comment_id) DO NOTHING
  RETURNING id, comment_id
), d AS (
  INSERT INTO webhook_deliveries (delivery_id, comment_id, event, outcome, task_id, received_at)
  SELECT i.delivery_id, t.comment_id, i.event, 'accepted', t.id, $12::timestamp FROM t JOIN input i USING (comment_id)
  ON CONFLICT DO NOTHING
), f AS (
  INSERT INTO follow_ups (task_id, queue, job_id, data, created_at)
  SELECT id, 'intake', id || '-route-0', jsonb_build_object('v', 1, 'kind', 'route-command', 'taskId', id), $12::timestamp FROM t
  UNION ALL
  SELECT id, 'notify', id || '-notify-0', jsonb_build_object('v', 1, 'kind', 'gitea-status', 'taskId', id), $12::timestamp FROM t
  RETURNING id, task_id, queue, job_id, data
)
SELECT f.id, f.task_id AS "taskId", f.queue, f.job_id AS "jobId", f.data, t.comment_id::text AS "commentId"
FROM f JOIN t ON t.id = f.task_id ORDER BY f.id`;

type Row = Pick<FollowUp, "id" | "taskId" | "queue" | "jobId" | "data"> & { commentId: string };

interface Pending {
  command: IncomingCommand;
  maxRounds: number;
  resolve(outcome: AcceptOutcome): void;
  reject(error: unknown): void;
}

/**
 * A command Postgres will never store as given (a value out of range, bytes it refuses): the same
 * input would fail again, so it is refused with a reason instead of being retried.
 */
export class CommandRefusedError extends Error {
  override readonly name = "CommandRefusedError";
  constructor(readonly commentId: number, options: { cause: unknown }) {
    super(`comment ${commentId} cannot be stored: ${String((options.cause as Error)?.message ?? options.cause)}`, options);
  }
}

/** Commands per statement at most; more wait for the next. */
const MAX_BATCH = 100;
/** Statements in flight at once; while they commit, the next batch gathers. */
const MAX_IN_FLIGHT = 2;

/** Review rounds a command may take: plan ⇄ plan-review for plans, dev ⇄ reviewer for code. */
export interface CommandRounds {
  code: number;
  plan: number;
}

/**
 * Accepts commands with group commit: a command arriving while no statement is in flight is
 * written at once; those arriving meanwhile are written together by the next statement (one
 * round trip and one commit for all of them). Each caller learns its own outcome once committed.
 */
export function createCommandAcceptor(pool: Database["pool"], rounds: number | CommandRounds) {
  const { code, plan } = typeof rounds === "number" ? { code: rounds, plan: rounds } : rounds;
  let waiting: Pending[] = [];
  let inFlight = 0;

  async function write(batch: Pending[]): Promise<void> {
    // The first of several deliveries of one comment in a batch is written; the rest are duplicates.
    const first = new Map<string, Pending>();
    for (const item of batch) {
      const key = String(item.command.commentId);
      if (!first.has(key)) first.set(key, item);
    }
    const items = [...first.values()];
    const col = <T>(f: (p: Pending) => T) => items.map(f);
    const now = new Date();
    const result = await pool.query<Row>({
      name: "rt-gitea-accept-batch",
      text: ACCEPT,
      values: [
        col((p) => p.command.owner),
        col((p) => p.command.repo),
        col((p) => p.command.target),
        col((p) => p.command.number),
        col((p) => p.command.kind),
        col((p) => p.command.message),
        col((p) => p.command.author),
        col((p) => String(p.command.commentId)),
        col((p) => p.maxRounds),
        col((p) => p.command.deliveryId),
        col((p) => p.command.event),
        now.toISOString(),
      ],
    });
    const accepted = new Map<string, FollowUp[]>();
    for (const { commentId, ...row } of result.rows) {
      const rows = accepted.get(commentId) ?? [];
      rows.push({ ...row, createdAt: now, dispatchedAt: null });
      accepted.set(commentId, rows);
    }
    for (const item of batch) {
      const key = String(item.command.commentId);
      const followUps = first.get(key) === item ? accepted.get(key) : undefined;
      item.resolve(
        followUps ? { status: "accepted", taskId: followUps[0]!.taskId, followUps } : { status: "duplicate" },
      );
    }
  }

  /**
   * A batch that Postgres refuses for its data is written again one command at a time, so one
   * poison command fails alone and its neighbours are stored. An outage fails the whole batch.
   */
  async function writeIsolating(batch: Pending[]): Promise<void> {
    try {
      await write(batch);
    } catch (error) {
      if (!isPoisonSqlError(error)) throw error;
      if (batch.length === 1) {
        batch[0]!.reject(new CommandRefusedError(batch[0]!.command.commentId, { cause: error }));
        return;
      }
      for (const item of batch) await writeIsolating([item]).catch((err: unknown) => item.reject(err));
    }
  }

  function flush(): void {
    while (inFlight < MAX_IN_FLIGHT && waiting.length > 0) {
      const batch = waiting.slice(0, MAX_BATCH);
      waiting = waiting.slice(MAX_BATCH);
      inFlight++;
      writeIsolating(batch)
        .catch((error: unknown) => batch.forEach((item) => item.reject(error)))
        .finally(() => {
          inFlight--;
          flush();
        });
    }
  }

  return function accept(command: IncomingCommand): Promise<AcceptOutcome> {
    const planning = command.kind === "plan" || (command.kind === "iterate" && command.target === "issue");
    return new Promise<AcceptOutcome>((resolve, reject) => {
      waiting.push({ command, maxRounds: planning ? plan : code, resolve, reject });
      flush();
    });
  };
}

export type CommandAcceptor = ReturnType<typeof createCommandAcceptor>;
