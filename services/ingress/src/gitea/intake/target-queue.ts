import type { Task } from "@ratatoskr/db";
import { isWorkCommand } from "./intake-deps.ts";

/** A command in its issue/PR's line, for `/agent status` and the status comments (G4, G7). */
export interface QueueEntry {
  taskId: number;
  kind: string;
  requester: string;
  status: "received" | "queued" | "running" | "paused";
  /** 0 for the running (or budget-paused) command, 1… for those waiting, in receive order. */
  position: number;
}

/** The running and waiting work commands of one issue/PR (control commands never wait). */
export function queueEntries(tasks: readonly Task[]): QueueEntry[] {
  const work = tasks.filter((t) => isWorkCommand(t.commandKind));
  const holding = (t: Task) => t.status === "running" || t.status === "paused";
  const running = work.filter(holding);
  const waiting = work.filter((t) => !holding(t));
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
    .map((e) => {
      const what = `\`${e.kind}\` (#${e.taskId}) by @${e.requester}`;
      if (e.status === "running") return `- ▶ running: ${what}`;
      if (e.status === "paused") return `- ⏸ paused by its budget: ${what} — \`/agent continue [+USD]\` or \`/agent stop\``;
      return `- ${e.position}. waiting: ${what}`;
    })
    .join("\n");
}
