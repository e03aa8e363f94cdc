import { nestedDeeperThan } from "@ratatoskr/contracts";
import { z } from "zod";
import { isGiteaLogin, isGiteaRepoName } from "./gitea-names.ts";

/**
 * The parts of Gitea's IssueCommentPayload Ratatoskr reads (gitea-js has no webhook payload types;
 * field names follow Gitea's `structs.IssueCommentPayload`). Unknown fields are ignored.
 */
/** NUL never reaches storage (Postgres refuses it in text): stripped at this edge. */
const text = z.string().transform((s) => s.replaceAll("\u0000", ""));
/** Logins and repository names are checked against Gitea's own character sets (gitea-names.ts). */
const login = text.pipe(z.string().refine(isGiteaLogin, "not a Gitea login"));
const repoName = text.pipe(z.string().refine(isGiteaRepoName, "not a Gitea repository name"));
/** Issue numbers are stored as int4, comment ids as int8 read into a JS number. */
const INT4_MAX = 2_147_483_647;
const userSchema = z.object({ id: z.number(), login });

export const issueCommentPayloadSchema = z.object({
  action: z.string(),
  is_pull: z.boolean().optional(),
  issue: z.object({
    number: z.number().int().positive().max(INT4_MAX),
    title: z.string().optional(),
    pull_request: z.unknown().optional(),
  }),
  comment: z.object({
    id: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
    body: text,
    user: userSchema,
    html_url: z.string().optional(),
    created_at: z.string().optional(),
  }),
  repository: z.object({
    name: repoName,
    full_name: z.string().optional(),
    owner: z.object({ login }),
  }),
  sender: userSchema.optional(),
});

export type IssueCommentPayload = z.infer<typeof issueCommentPayloadSchema>;

/** A new comment on an issue or PR: the only delivery that can carry a command. */
export interface CommentCreated {
  owner: string;
  repo: string;
  target: "issue" | "pr";
  number: number;
  commentId: number;
  body: string;
  author: string;
}

export type PayloadReading =
  | { kind: "comment-created"; comment: CommentCreated }
  /** A real Gitea delivery that is not a new comment (other event, edit, review, …). */
  | { kind: "ignored"; why: string }
  /** A new comment whose fields no real Gitea sends (ids out of range, names outside Gitea's characters): refused. */
  | { kind: "invalid"; why: string }
  | { kind: "malformed" };

/** Nothing Gitea sends nests this deep; deeper input is refused before anything walks it. */
const MAX_PAYLOAD_DEPTH = 64;

/**
 * Reads a delivery. Malformed means "not JSON", nested past any real payload, or an
 * `issue_comment` event without its `comment` (every IssueCommentPayload has one, whatever the
 * action). Other events are ignored by their type, not by a missing field: a PR review arrives as
 * `pull_request_comment` and carries no `comment` (gitea-facts.md). Edits and deletions are
 * ignored too: only a comment's creation can be a command.
 */
export function readDelivery(event: string | undefined, rawBody: Buffer | string): PayloadReading {
  let json: unknown;
  try {
    json = JSON.parse(rawBody.toString());
  } catch {
    return { kind: "malformed" };
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) return { kind: "malformed" };
  if (nestedDeeperThan(json, MAX_PAYLOAD_DEPTH)) return { kind: "malformed" };
  if (event !== "issue_comment") return { kind: "ignored", why: `event ${event ?? "(none)"}` };
  const comment = (json as { comment?: unknown }).comment;
  if (typeof comment !== "object" || comment === null || Array.isArray(comment)) return { kind: "malformed" };
  const action = (json as { action?: unknown }).action;
  if (action !== "created") return { kind: "ignored", why: `action ${String(action)}` };
  const parsed = issueCommentPayloadSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { kind: "invalid", why: `${issue?.path.join(".") ?? "payload"}: ${issue?.message ?? "invalid"}` };
  }
  const p = parsed.data;
  const isPull = p.is_pull ?? Boolean(p.issue.pull_request);
  return {
    kind: "comment-created",
    comment: {
      owner: p.repository.owner.login,
      repo: p.repository.name,
      target: isPull ? "pr" : "issue",
      number: p.issue.number,
      commentId: p.comment.id,
      body: p.comment.body,
      author: p.comment.user.login,
    },
  };
}
