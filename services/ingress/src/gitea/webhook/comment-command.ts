import type { GiteaCommandKind } from "@ratatoskr/contracts";
import { isGiteaLogin, isGiteaRepoName, parseAgentComment, type CommentCreated } from "@ratatoskr/gitea";
import type { IncomingCommand } from "../store/command-acceptor.ts";

/** Postgres refuses U+0000 in text; a comment read through the API may still carry it. */
const withoutNul = (text: string) => text.replaceAll("\u0000", "");
/**
 * Gitea's owner and repository names are case-insensitive: the webhook, the sweep (names from
 * GITEA_REPOS) and the API may spell one repository differently, so a comment's key and its
 * issue/PR's queue use one spelling.
 */
const repoName = (name: string) => withoutNul(name).toLowerCase();

/**
 * The delivery id of a comment that came without one (the sweep found it, or a delivery lacked
 * the header), made of what the comment is known by: its repository, in one spelling, and its id.
 */
export function commentDeliveryId(
  source: "sweep" | "unnamed",
  comment: Pick<CommentCreated, "owner" | "repo" | "commentId">,
): string {
  return `${source}-${repoName(comment.owner)}/${repoName(comment.repo)}:${comment.commentId}`;
}

/**
 * What a new comment asks for: nothing (not `/agent …`, written by the bot itself, or naming its
 * author or repository with characters no Gitea allows: such names would reach prompts and status
 * comments as they are), or a command to store. Pure; the webhook and the sweep share it.
 */
export function commandOf(
  comment: CommentCreated,
  botLogin: string,
  delivery: { deliveryId: string; event: string },
): IncomingCommand | undefined {
  if (comment.author.toLowerCase() === botLogin.toLowerCase()) return undefined;
  if (!isGiteaLogin(comment.author) || !isGiteaLogin(comment.owner) || !isGiteaRepoName(comment.repo)) return undefined;
  const parsed = parseAgentComment(comment.body, comment.target);
  if (parsed.kind === "not-a-command") return undefined;
  const { body: _body, ...where } = comment;
  return {
    ...where,
    owner: repoName(where.owner),
    repo: repoName(where.repo),
    author: withoutNul(where.author),
    kind: parsed.kind === "command" ? (parsed.command as GiteaCommandKind) : null,
    message: withoutNul(parsed.kind === "command" ? parsed.message : parsed.given),
    ...delivery,
  };
}
