import type { Repositories } from "@ratatoskr/db";
import { looksLikeAgentCommand, type Comment, type GiteaClient, type RepoRef } from "@ratatoskr/gitea";
import type { Logger } from "@ratatoskr/runtime";
import { CommandRefusedError, type AcceptOutcome, type IncomingCommand } from "../store/command-acceptor.ts";
import { commandOf, commentDeliveryId } from "../webhook/comment-command.ts";

const PAGE_SIZE = 50;
/** A repository never swept before is read this far back. */
const FIRST_LOOKBACK_MS = 60 * 60_000;
/** Re-read a little before the cursor: comment clocks and our clock may differ. */
const OVERLAP_MS = 60_000;

export interface SweepDeps {
  gitea: GiteaClient;
  repos: Repositories;
  botLogin: () => string;
  accept(command: IncomingCommand): Promise<AcceptOutcome>;
  /** Commands were stored: make their tasks. */
  stored(): void;
  logger: Logger;
}

/** Issue numbers are stored as int4. */
const INT4_MAX = 2_147_483_647;

/** `/issues/12` or `/pulls/12` at the end of a comment's issue or PR URL. */
function numberFrom(url: string | undefined): number | undefined {
  const match = url ? /\/(?:issues|pulls)\/(\d+)$/.exec(url) : null;
  const number = match ? Number(match[1]) : undefined;
  return number !== undefined && number >= 1 && number <= INT4_MAX ? number : undefined;
}

/**
 * A comment edited after it was written. Only a comment's creation is a command, on the webhook
 * (`edited` deliveries are ignored) and here alike: the API shows only the edited text, so the
 * sweep cannot know what the comment said when it was written, and takes no edited comment.
 */
function wasEdited(comment: Comment): boolean {
  const created = Date.parse(comment.created_at ?? "");
  const updated = Date.parse(comment.updated_at ?? "");
  return Number.isFinite(created) && Number.isFinite(updated) && updated > created;
}

/**
 * Gitea never retries a failed delivery (G1): reads the repository's comments since the
 * cursor and takes in `/agent` comments through the same idempotent insert as the webhook,
 * so a comment that did arrive is not taken twice. Returns the ids of the comments it stored.
 */
export async function sweepRepository(deps: SweepDeps, where: RepoRef): Promise<number[]> {
  const cursor = await deps.repos.sweepCursors.find(where.owner, where.repo);
  const sinceMs = cursor?.lastCommentAt
    ? cursor.lastCommentAt.getTime() - OVERLAP_MS
    : Date.now() - FIRST_LOOKBACK_MS;
  const since = new Date(sinceMs).toISOString();
  let lastId = cursor?.lastCommentId ?? null;
  let lastAt = cursor?.lastCommentAt ?? null;
  const accepted: number[] = [];
  for (let page = 1; ; page++) {
    const comments: unknown = await deps.gitea.listRepoComments(where, { since, page, limit: PAGE_SIZE });
    if (!Array.isArray(comments)) throw new Error(`Gitea answered the comments of ${where.owner}/${where.repo} with something that is not a list`);
    for (const comment of comments as Comment[]) {
      const stored = await takeIn(deps, where, comment);
      if (stored !== undefined) accepted.push(stored);
      const at = comment.created_at ? new Date(comment.created_at) : null;
      if (comment.id && (lastId === null || BigInt(comment.id) > lastId)) lastId = BigInt(comment.id);
      if (at && (!lastAt || at > lastAt)) lastAt = at;
    }
    if (comments.length < PAGE_SIZE) break;
  }
  await deps.repos.sweepCursors.save({
    ...where,
    repoOwner: where.owner,
    repoName: where.repo,
    lastCommentId: lastId,
    lastCommentAt: lastAt,
  });
  if (accepted.length > 0) {
    deps.stored();
    deps.logger.warn(
      { repo: `${where.owner}/${where.repo}`, comments: accepted },
      "sweep took in /agent comments whose webhook never arrived",
    );
  }
  return accepted;
}

async function takeIn(deps: SweepDeps, where: RepoRef, comment: Comment): Promise<number | undefined> {
  const body = comment.body ?? "";
  if (!comment.id || !looksLikeAgentCommand(body)) return undefined;
  if (wasEdited(comment)) {
    deps.logger.debug({ commentId: comment.id }, "sweep passed an edited /agent comment: an edit is never a command");
    return undefined;
  }
  const isPull = Boolean(comment.pull_request_url);
  const number =
    numberFrom(isPull ? comment.pull_request_url : comment.issue_url) ?? numberFrom(comment.issue_url);
  if (number === undefined) return undefined;
  const found = {
    ...where,
    target: isPull ? ("pr" as const) : ("issue" as const),
    number,
    commentId: comment.id,
    body,
    author: comment.user?.login ?? "",
  };
  const command = commandOf(found, deps.botLogin(), { deliveryId: commentDeliveryId("sweep", found), event: "sweep" });
  if (!command) return undefined;
  let outcome: AcceptOutcome;
  try {
    outcome = await deps.accept(command);
  } catch (error) {
    // A poison comment is skipped with a line, or it would stop every later sweep of the repo.
    if (!(error instanceof CommandRefusedError)) throw error;
    deps.logger.warn({ err: error, commentId: comment.id }, "sweep skipped a comment that cannot be stored");
    return undefined;
  }
  return outcome.status === "accepted" ? comment.id : undefined;
}
