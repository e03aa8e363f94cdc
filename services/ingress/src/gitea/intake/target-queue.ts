import type { Task } from "@ratatoskr/db";

/** A command in its issue/PR's line, for `/agent status` and the status comments (G4, G7). */
export interface QueueEntry {
  taskId: number;
  kind: string;
  requester: string;
  status: "received" | "queued" | "running";
  /** 0 for the running command, 1… for those waiting, in receive order. */
  position: number;
}

/** The running and waiting work commands of one issue/PR (control commands never wait). */
export function queueEntries(tasks: readonly Task[]): QueueEntry[] {
  const work = tasks.filter(
    (t) => t.commandKind !== null && t.commandKind !== "status" && t.commandKind !== "cancel",
  );
  const running = work.filter((t) => t.status === "running");
  const waiting = work.filter((t) => t.status !== "running");
  return [...running, ...waiting].map((t, index) => ({
    taskId: t.id,
    kind: t.commandKind ?? "",
    requester: t.requesterLogin ?? "",
    status: t.status as QueueEntry["status"],
    position: running.length > 0 ? index : index + 1,
  }));
}

/** `/agent status` as Markdown. */
export function renderQueue(entries: readonly QueueEntry[]): string {
  if (entries.length === 0) return "Nothing is running or waiting here.";
  return entries
    .map((e) =>
      e.status === "running"
        ? `- ▶ running: \`${e.kind}\` (#${e.taskId}) by @${e.requester}`
        : `- ${e.position}. waiting: \`${e.kind}\` (#${e.taskId}) by @${e.requester}`,
    )
    .join("\n");
}
