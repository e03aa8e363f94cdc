/** Who the bot serves (T2). Either list matching is enough; an empty list matches nobody. */
export interface Allowlist {
  chatIds: ReadonlySet<number>;
  userIds: ReadonlySet<number>;
}

export interface Sender {
  chatId: number;
  /** Absent for anonymous group admins and channel posts: only the chat can match then. */
  userId: number | null;
}

export function isAllowed(allowlist: Allowlist, sender: Sender): boolean {
  if (allowlist.chatIds.has(sender.chatId)) return true;
  return sender.userId !== null && allowlist.userIds.has(sender.userId);
}
