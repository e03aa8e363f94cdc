import type { GiteaCommandKind } from "@ratatoskr/contracts";
import { createGroupCommit, isPoisonSqlError, type Database, type FollowUp } from "@ratatoskr/db";

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

interface Item {
  command: IncomingCommand;
  maxRounds: number;
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

/** A rejection already marked handled: the group commit attaches its own handlers later. */
function refused<T>(error: unknown): Promise<T> {
  const outcome = Promise.reject<T>(error);
  outcome.catch(() => undefined);
  return outcome;
}

/**
 * Accepts commands with group commit: a command arriving while no statement is in flight is
 * written at once; those arriving meanwhile are written together by the next statement (one
 * round trip and one commit for all of them). Each caller learns its own outcome once committed.
 * Deliveries of one comment are never in one batch: the first is written, the later ones find it.
 */
export function createCommandAcceptor(pool: Database["pool"], rounds: number | CommandRounds) {
  const { code, plan } = typeof rounds === "number" ? { code: rounds, plan: rounds } : rounds;

  async function write(items: readonly Item[]): Promise<AcceptOutcome[]> {
    const col = <T>(f: (item: Item) => T) => items.map(f);
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
    return items.map((item) => {
      const followUps = accepted.get(String(item.command.commentId));
      return followUps ? { status: "accepted", taskId: followUps[0]!.taskId, followUps } : { status: "duplicate" };
    });
  }

  /**
   * A batch that Postgres refuses for its data is written again one command at a time, so one
   * poison command fails alone and its neighbours are stored. An outage fails the whole batch.
   */
  async function writeIsolating(items: readonly Item[]): Promise<Promise<AcceptOutcome>[]> {
    try {
      return (await write(items)).map((outcome) => Promise.resolve(outcome));
    } catch (error) {
      if (!isPoisonSqlError(error)) throw error;
      if (items.length === 1) return [refused(new CommandRefusedError(items[0]!.command.commentId, { cause: error }))];
      const outcomes: Promise<AcceptOutcome>[] = [];
      for (const item of items) outcomes.push(...(await writeIsolating([item]).catch((err: unknown) => [refused<AcceptOutcome>(err)])));
      return outcomes;
    }
  }

  const acceptItem = createGroupCommit<Item, AcceptOutcome>({
    write: writeIsolating,
    keyOf: (item) => item.command.commentId,
    maxBatch: MAX_BATCH,
    maxInFlight: MAX_IN_FLIGHT,
  });

  return function accept(command: IncomingCommand): Promise<AcceptOutcome> {
    const planning = command.kind === "plan" || (command.kind === "iterate" && command.target === "issue");
    return acceptItem({ command, maxRounds: planning ? plan : code });
  };
}

export type CommandAcceptor = ReturnType<typeof createCommandAcceptor>;
