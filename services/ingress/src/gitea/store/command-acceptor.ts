import type { GiteaCommandKind } from "@ratatoskr/contracts";
import { createGroupCommit, isPoisonSqlError, type Database } from "@ratatoskr/db";

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
  /** `X-Gitea-Delivery` (or Forgejo's), or one made of the comment's identity (commentDeliveryId). */
  deliveryId: string;
  event: string;
}

/** `accepted`: stored now, its task follows; `duplicate`: this comment (or delivery) was stored before. */
export type AcceptOutcome = { status: "accepted" } | { status: "duplicate" };

/**
 * The one durable write before the webhook answers (issue 22): the command as read, into the
 * delivery inbox. Unique on the delivery id and on the comment (repository + comment id), so
 * Redeliver, concurrent duplicates and the sweep insert nothing a second time — and since no task
 * row is attempted, a duplicate uses up no task id. The task is made afterwards (command-inbox.ts).
 */
const STORE = `
INSERT INTO webhook_deliveries (delivery_id, repo_owner, repo_name, comment_id, event, outcome, target_type,
  target_number, command_kind, command_message, requester_login, max_rounds, received_at)
SELECT delivery_id, owner, repo, comment_id, event, 'pending', target, number, kind, message, author, max_rounds, $12::timestamp
FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[],
  $8::bigint[], $9::int[], $10::text[], $11::text[])
  AS i(owner, repo, target, number, kind, message, author, comment_id, max_rounds, delivery_id, event)
ON CONFLICT DO NOTHING
RETURNING id, delivery_id AS "deliveryId"`;

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

const commentKey = (c: IncomingCommand) => `${c.owner}/${c.repo}:${c.commentId}`.toLowerCase();

/**
 * Stores commands with group commit: a command arriving while no statement is in flight is
 * written at once; those arriving meanwhile are written together by the next statement (one
 * round trip and one commit for all of them). Each caller learns its own outcome once committed.
 * Deliveries of one comment are never in one batch: the first is written, the later ones find it.
 */
export function createCommandAcceptor(pool: Database["pool"], rounds: number | CommandRounds) {
  const { code, plan } = typeof rounds === "number" ? { code: rounds, plan: rounds } : rounds;
  /** The highest inbox row id this process stored (0: none yet). */
  let newest = 0;

  async function write(items: readonly Item[]): Promise<AcceptOutcome[]> {
    const col = <T>(f: (item: Item) => T) => items.map(f);
    const result = await pool.query<{ id: number; deliveryId: string }>({
      name: "rt-gitea-store-batch",
      text: STORE,
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
        new Date().toISOString(),
      ],
    });
    for (const row of result.rows) newest = Math.max(newest, row.id);
    const stored = new Set(result.rows.map((r) => r.deliveryId));
    return items.map((item) => ({ status: stored.has(item.command.deliveryId) ? "accepted" : "duplicate" }));
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
    keyOf: (item) => commentKey(item.command),
    maxBatch: MAX_BATCH,
    maxInFlight: MAX_IN_FLIGHT,
  });

  function accept(command: IncomingCommand): Promise<AcceptOutcome> {
    const planning = command.kind === "plan" || (command.kind === "iterate" && command.target === "issue");
    return acceptItem({ command, maxRounds: planning ? plan : code });
  }
  return Object.assign(accept, { newestStored: () => newest });
}

export type CommandAcceptor = ReturnType<typeof createCommandAcceptor>;
