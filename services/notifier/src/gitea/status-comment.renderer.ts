import type { Task } from "@ratatoskr/db";

/** Hidden in the rendered comment; finds the comment again when its stored id is gone (G5). */
export function statusMarker(taskId: number): string {
  return `<!-- ratatoskr:status task=${taskId} -->`;
}

export function hasMarker(body: string | undefined, taskId: number): boolean {
  return (body ?? "").includes(statusMarker(taskId));
}

/** What the status comment shows beyond the task row. */
export interface StatusFacts {
  /** 1-based place in the issue/PR's line while queued. */
  position?: number;
  /** When the command started running. */
  startedAt?: Date;
  /** The agent working now (or last), e.g. `planner`, `reviewer`. */
  stage?: string;
  /** The round that agent's run belongs to (default: the task's). */
  stageRound?: number;
  /** The newest tool call of the run in progress (O6). */
  lastTool?: string;
  tokens: number;
  costUsd: number;
  now: Date;
}

const HEADLINE: Record<string, string> = {
  received: "📥 received — checking permission",
  queued: "🕒 queued",
  running: "▶️ running",
  paused: "⏸️ paused — it has spent its budget",
  success: "✅ done",
  failed: "❌ failed",
  timeout: "⏱️ timed out",
  rejected: "🚫 rejected",
  cancelled: "⏹️ cancelled",
};

const stageRound = (task: Task, facts: StatusFacts) => facts.stageRound ?? task.round;

function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const m = Math.floor(s / 60);
  return m > 0 ? `${m} min ${s % 60} s` : `${s} s`;
}

function usage(facts: StatusFacts): string {
  return `${facts.tokens.toLocaleString("en-US")} tokens, $${facts.costUsd.toFixed(4)}`;
}

/** P5: what a paused command spent, against what, and the two answers it waits for. */
function pausedLines(task: Task, facts: StatusFacts): string[] {
  const budget = task.budgetUsd === null ? "" : ` of a $${task.budgetUsd.toFixed(4)} budget`;
  return [
    `**Spent:** ${usage(facts)}${budget}`,
    ...(task.branch ? [`**Branch:** \`${task.branch}\` (the work so far is pushed)`] : []),
    "",
    "`/agent continue [+USD]` gives it that much more to spend (default: the configured budget) and it goes on where it stopped; `/agent stop` ends it (what it pushed stays).",
  ];
}

/** P4: where the work so far is, and how to go on with it. */
function timeoutLines(task: Task): string[] {
  return [
    ...(task.failureReason ? ["", task.failureReason] : []),
    ...(task.branch ? ["", `**Branch:** \`${task.branch}\` (the work so far is pushed)`] : []),
    "",
    "`/agent continue` puts it back in line; the agent then goes on in its own session where it stopped.",
  ];
}

/** The whole status comment of one command, Markdown with the hidden marker first. Pure. */
export function renderStatusComment(task: Task, facts: StatusFacts): string {
  const command = task.commandKind ? `/agent ${task.commandKind}` : "/agent";
  const lines = [
    statusMarker(task.id),
    `**\`${command}\`** by @${task.requesterLogin ?? "?"} · command #${task.id}`,
    "",
  ];
  let headline = HEADLINE[task.status] ?? task.status;
  if (task.status === "queued" && facts.position !== undefined)
    headline += ` — position ${facts.position} in this ${task.targetType === "pr" ? "PR" : "issue"}'s line`;
  lines.push(`**Status:** ${headline}`);
  if (task.status === "running") {
    if (facts.stage)
      lines.push(
        `**Stage:** ${facts.stage}${stageRound(task, facts) > 0 ? `, round ${stageRound(task, facts)} of ${task.maxRounds}` : ""}`,
      );
    if (facts.lastTool) lines.push(`**Last tool:** \`${facts.lastTool}\``);
    if (facts.startedAt)
      lines.push(`**Elapsed:** ${duration(facts.now.getTime() - facts.startedAt.getTime())}`);
    lines.push(`**So far:** ${usage(facts)}`);
    if (task.agentServerUrl && task.agentSessionId) {
      lines.push(
        "",
        "Watch the agent:",
        "```",
        `opencode attach ${task.agentServerUrl} --session ${task.agentSessionId}`,
        "```",
      );
    }
  }
  if (task.status === "paused") lines.push(...pausedLines(task, facts));
  if (task.status === "timeout") lines.push(...timeoutLines(task));
  if (task.status === "rejected" || task.status === "failed" || task.status === "cancelled") {
    if (task.failureReason) lines.push("", task.failureReason);
  }
  if (task.resultText && (task.status === "success" || task.status === "failed"))
    lines.push("", task.resultText);
  if (task.prUrl) lines.push("", `**Pull request:** ${task.prUrl}`);
  if (task.branch && task.status === "success") lines.push(`**Branch:** \`${task.branch}\``);
  if (task.status === "success" || task.status === "failed" || task.status === "cancelled" || task.status === "timeout") {
    if (facts.tokens > 0 || facts.costUsd > 0) lines.push("", `**Cost:** ${usage(facts)}`);
    if (facts.startedAt && task.finishedAt)
      lines.push(`**Took:** ${duration(task.finishedAt.getTime() - facts.startedAt.getTime())}`);
  }
  return lines.join("\n");
}
