import type { Notification, Prisma, PrismaClient } from "@ratatoskr/db";
import type { GiteaClient } from "@ratatoskr/gitea";

/** The messages a Gitea command gets as a comment of their own, beside its status comment. */
export const REPLY_TEMPLATES = ["task.postmortem", "task.postmortem-unavailable"] as const;

/** Hidden in a reply; finds it again when the process died between posting it and recording it. */
export function replyMarker(notificationId: number): string {
  return `<!-- ratatoskr:reply notification=${notificationId} -->`;
}

/**
 * Text the postmortem agent wrote, shown in Markdown: no HTML (so no forged marker or hidden
 * text) and no @mentions (a comment must not page people the agent named).
 */
function inert(text: unknown): string {
  return String(text ?? "")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll("@", "@\u200b");
}

/** The reply's Markdown, marker first. Pure. */
export function renderReplyComment(reply: Pick<Notification, "id" | "template" | "params">): string {
  const p = (reply.params ?? {}) as Record<string, unknown>;
  const taskId = String(p["taskId"] ?? "?");
  if (reply.template === "task.postmortem") {
    const what = p["cause"] === "timeout" ? "ran out of time" : "failed";
    return [
      replyMarker(reply.id),
      `🔍 **Why command #${taskId} ${what}**`,
      "",
      `**Why it happened:** ${inert(p["why"])}`,
      "",
      `**What to do:** ${inert(p["whatToDo"])}`,
    ].join("\n");
  }
  return [
    replyMarker(reply.id),
    `🔍 The analysis of what went wrong with command #${taskId} is unavailable: the postmortem agent could not finish.`,
    "The status comment above shows why it stopped and what to do next.",
  ].join("\n");
}

export interface ReplyDeps {
  prisma: PrismaClient;
  gitea: Pick<GiteaClient, "createComment" | "listIssueComments">;
}

type Where = { owner: string; repo: string };

/**
 * Posts the task's replies not yet posted, oldest first, each exactly once: under the caller's
 * per-task lock, a reply already on the issue (found by its marker) is recorded, not posted again.
 */
export async function postPendingReplies(deps: ReplyDeps, taskId: number, where: Where, number: number): Promise<number> {
  const pending = await deps.prisma.notification.findMany({
    where: { taskId, channel: "gitea", template: { in: [...REPLY_TEMPLATES] }, status: { in: ["pending", "sending"] } },
    orderBy: { id: "asc" },
  });
  if (pending.length === 0) return 0;
  const comments = await deps.gitea.listIssueComments(where, number);
  for (const reply of pending) {
    const posted = comments.find((c) => (c.body ?? "").includes(replyMarker(reply.id)));
    const commentId = posted?.id ?? (await deps.gitea.createComment(where, number, renderReplyComment(reply))).id ?? 0;
    const data: Prisma.NotificationUpdateManyMutationInput = { status: "sent", sentAt: new Date(), sentMessageIds: [BigInt(commentId)] };
    await deps.prisma.notification.updateMany({ where: { id: reply.id, status: { in: ["pending", "sending"] } }, data });
  }
  return pending.length;
}
