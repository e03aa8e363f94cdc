import type { GiteaCommandKind } from "@ratatoskr/contracts";
import type { Database, FollowUp } from "@ratatoskr/db";

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
 * One statement: the command's task (unique on the comment id, so Redeliver and concurrent
 * duplicates insert nothing), its delivery record, and the outbox rows for routing it and for
 * its status comment. Nothing slow happens here; the caller dispatches the rows after.
 */
const ACCEPT = `
WITH t AS (
  INSERT INTO tasks (source, status, repo_owner, repo_name, target_type, target_number, target_key,
    command_kind, command_message, requester_login, comment_id, max_turns, max_rounds, created_at, updated_at)
  VALUES ('gitea', 'received', $1::text, $2::text, $3, $4::int, $1::text || '/' || $2::text || '#' || $4::int, $5, $6, $7, $8::bigint, 0, $9::int,
    $12::timestamp, $12::timestamp)
  ON CONFLICT (comment_id) DO NOTHING
  RETURNING id
), d AS (
  INSERT INTO webhook_deliveries (delivery_id, comment_id, event, outcome, task_id, received_at)
  SELECT $10, $8::bigint, $11, 'accepted', id, $12::timestamp FROM t
  ON CONFLICT DO NOTHING
), f AS (
  INSERT INTO follow_ups (task_id, queue, job_id, data, created_at)
  SELECT id, 'intake', id || '-route-0', jsonb_build_object('v', 1, 'kind', 'route-command', 'taskId', id), $12::timestamp FROM t
  UNION ALL
  SELECT id, 'notify', id || '-notify-0', jsonb_build_object('v', 1, 'kind', 'gitea-status', 'taskId', id), $12::timestamp FROM t
  RETURNING id, task_id, queue, job_id, data, created_at
)
SELECT id, task_id AS "taskId", queue, job_id AS "jobId", data, created_at AS "createdAt" FROM f ORDER BY id`;

/** Review rounds a command may take: plan ⇄ plan-review for plans, dev ⇄ reviewer for code. */
export interface CommandRounds {
  code: number;
  plan: number;
}

export function createCommandAcceptor(pool: Database["pool"], rounds: number | CommandRounds) {
  const { code, plan } = typeof rounds === "number" ? { code: rounds, plan: rounds } : rounds;
  return async function accept(command: IncomingCommand): Promise<AcceptOutcome> {
    const planning = command.kind === "plan" || (command.kind === "iterate" && command.target === "issue");
    const maxRounds = planning ? plan : code;
    const now = new Date().toISOString();
    const result = await pool.query<Omit<FollowUp, "dispatchedAt" | "createdAt"> & { createdAt: string }>({
      name: "rt-gitea-accept",
      text: ACCEPT,
      values: [
        command.owner,
        command.repo,
        command.target,
        command.number,
        command.kind,
        command.message,
        command.author,
        String(command.commentId),
        maxRounds,
        command.deliveryId,
        command.event,
        now,
      ],
    });
    if (result.rows.length === 0) return { status: "duplicate" };
    const followUps: FollowUp[] = result.rows.map((row) => ({
      ...row,
      createdAt: new Date(now),
      dispatchedAt: null,
    }));
    return { status: "accepted", taskId: followUps[0]!.taskId, followUps };
  };
}

export type CommandAcceptor = ReturnType<typeof createCommandAcceptor>;
