import type { GiteaCommandKind } from "@ratatoskr/contracts";
import { parseAgentComment, type CommentCreated } from "@ratatoskr/gitea";
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
 * What a new comment asks for: nothing (not `/agent …`, or written by the bot itself), or a
 * command to store. Pure; the webhook and the sweep share it.
 */
export function commandOf(
  comment: CommentCreated,
  botLogin: string,
  delivery: { deliveryId: string; event: string },
): IncomingCommand | undefined {
  if (comment.author.toLowerCase() === botLogin.toLowerCase()) return undefined;
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
