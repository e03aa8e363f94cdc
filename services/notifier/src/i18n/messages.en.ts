import type { TelegramStatus } from "@ratatoskr/contracts";
import type { Catalog } from "./catalog.types.ts";
import type { AnalystProblem } from "./template-params.ts";

const COMMANDS = [
  "/start — start a new task",
  "/cancel — cancel the current task",
  "/skip — stop the questions and draft the task now",
  "/retry N — run task N again",
  "/status N — status of task N",
  "/status — versions of the running services",
  "/continue N — resume task N from its saved agent session",
  "/attach N — how to watch the live agent session of task N",
  "/help — this list",
].join("\n");

const STATUS: Record<TelegramStatus, string> = {
  draft: "draft",
  collecting: "collecting details",
  ready: "waiting for approval",
  approved: "approved",
  running: "in progress",
  paused: "paused: over its budget",
  success: "done",
  failed: "failed",
  timeout: "stopped by timeout",
  cancelled: "cancelled",
  aborted: "closed as not a coding request",
};

const ANALYST_PROBLEM: Record<AnalystProblem, string> = {
  "no-verdict": "it returned nothing at all",
  "invalid-json": "its answer was not valid JSON",
  "no-phase": "its answer had no phase",
  "unknown-phase": "its answer had a phase I don't know",
  "invalid-fields": "the draft fields in its answer were malformed",
  timeout: "it did not answer in time",
  unavailable: "the agent server could not be reached",
  "provider-refused": "the model provider refused the request",
  "server-misconfigured": "the agent server is too old or misconfigured (an operator must fix it)",
  "worker-died": "the process running the analysis died again and again (killed or crashed)",
  internal: "something on our side failed (not your message)",
};

const bullets = (items: string[]): string => items.map((item) => `• ${item}`).join("\n");

export const EN: Catalog = {
  "bot.greeting": ({ taskId }) =>
    `👋 Task <b>#${taskId}</b> is open.\n` +
    "Tell me what needs to be done: in which repository, what should change and why. " +
    "I'll ask a few questions and then show you a draft to approve.\n\n" +
    "/skip — draft it right away, /cancel — drop the task, /help — all commands.",
  "bot.help": () => `<b>Commands</b>\n${COMMANDS}`,
  "bot.unknown-command": ({ command }) =>
    `I don't know the command <code>${command}</code>. Here is what I understand:\n${COMMANDS}`,
  "bot.task-number-needed": ({ command, given }) =>
    given === null
      ? `/${command} needs a task number, e.g. <code>/${command} 12</code>.`
      : `“${given}” is not a task number. Try <code>/${command} 12</code>.`,
  "bot.not-allowed": () => "Sorry, this bot only works for its owners. Your message was not accepted.",
  "bot.text-only": () => "I read text only, please write it (a caption under a photo works too).",
  "bot.versions": ({ services }) =>
    services.length === 0
      ? "No service has reported its version yet."
      : `<b>Service versions</b>\n${bullets(services.map((s) => `${s.name} — <code>${s.version}</code>`))}`,
  "bot.attach": ({ taskId, serverUrl, sessionId }) =>
    `To watch the live agent session of task <b>#${taskId}</b>, run:\n` +
    `<code>opencode attach ${serverUrl} --session ${sessionId}</code>`,
  "bot.attach-none": ({ taskId, status }) =>
    `Task #${taskId} has no live agent run right now: it is ${STATUS[status]}. /status ${taskId} shows its runs.`,
  "bot.nothing-to-cancel": () => "There is no active task, so there is nothing to cancel.",
  "button.approve": () => "✅ Approve",
  "button.edit": () => "✏️ Edit",
  "button.cancel": () => "✖️ Cancel",
  "button.more-budget": () => "➕ Continue (+budget)",
  "button.stop": () => "⏹ Stop",
  "task.not-found": ({ taskId }) => `Task #${taskId} doesn't exist.`,
  "task.questions": ({ taskId, questions }) =>
    `Task <b>#${taskId}</b> — a few questions:\n` +
    `${questions.map((q, i) => `${i + 1}. ${q}`).join("\n")}\n\n` +
    "Answer in one message, or send /skip to get a draft now.",
  "task.draft-ready": ({ taskId, title, goal, repos, why, acceptanceCriteria }) =>
    `📝 Draft of task <b>#${taskId}</b>\n\n` +
    `<b>Title:</b> ${title}\n<b>Goal:</b> ${goal}\n<b>Repositories:</b> ${repos.join(", ")}\n<b>Why:</b> ${why}\n` +
    `<b>Acceptance criteria:</b>\n${bullets(acceptanceCriteria)}\n\n` +
    "Approve it (or write “go”), or tell me what to change.",
  "task.edit-prompt": ({ taskId }) => `Tell me what to change in the draft of task #${taskId}.`,
  "task.repo-not-found": ({ taskId, missing }) =>
    `Task #${taskId}: I can't find the ${missing.length === 1 ? "repository" : "repositories"} ` +
    `${missing.map((r) => `<code>${r}</code>`).join(", ")}. Which repository should I work in? Send it as <code>owner/name</code>.`,
  "task.turn-limit": ({ taskId, maxTurns }, f) =>
    `Task #${taskId}: that's ${f.count(maxTurns, { one: "round", other: "rounds" })} of questions, the most I do. ` +
    "Send /skip and I'll draft the task from what I know, or /cancel to drop it.",
  "task.approved": ({ taskId }) =>
    `✅ Task <b>#${taskId}</b> is approved. The developer agent is starting; follow it with /status ${taskId}.`,
  "task.already-approved": ({ taskId }) =>
    `Task #${taskId} is already approved and in the works, so it can't be changed now. Follow it with /status ${taskId}.`,
  "task.cancelled": ({ taskId }) => `Task #${taskId} is cancelled.`,
  "task.aborted": ({ taskId, reason }) =>
    `Task #${taskId} is closed: this doesn't look like a coding request.\nReason: ${reason}\nStart over with /start.`,
  "task.retry-refused": ({ taskId, status }) =>
    `Task #${taskId} can't be restarted: it is ${STATUS[status]}. Start a new one with /start.`,
  "task.retried": ({ taskId }) => `🔁 Task #${taskId} is restarted.`,
  "task.continued": ({ taskId }) => `▶️ Task #${taskId} resumes from its saved agent session.`,
  "task.status": (
    { taskId, status, title, repos, round, maxRounds, branch, traces, live, totalTokens, totalCostUsd, budgetUsd },
    f,
  ) => {
    const runs = traces.map(
      (t) =>
        `${t.agent} — ${t.outcome}, ${f.duration(t.durationMs)}, ` +
        `${f.count(t.tokens, { one: "token", other: "tokens" })}, ${f.costUsd(t.costUsd)}`,
    );
    const now =
      live === null
        ? ""
        : `Now: ${live.stage}${live.round === null ? "" : `, round ${live.round}`}, last tool ${live.lastTool ?? "—"}\n` +
          `Watch it: <code>opencode attach ${live.serverUrl} --session ${live.sessionId}</code>\n`;
    return (
      `<b>Task #${taskId}</b> — ${title}\nStatus: ${STATUS[status]}\nRepositories: ${repos.join(", ") || "—"}\n` +
      `Branch: ${branch === null ? "—" : `<code>${branch}</code>`}\nRound: ${round} of ${maxRounds}\n${now}\n` +
      (runs.length === 0 ? "No agent has run yet." : `<b>Recent runs</b>\n${bullets(runs)}`) +
      `\n\nTotal: ${f.count(totalTokens, { one: "token", other: "tokens" })}, ${f.costUsd(totalCostUsd)}` +
      (budgetUsd === null ? "" : ` of a ${f.costUsd(budgetUsd)} budget`)
    );
  },
  "task.running": ({ taskId }) => `⚙️ Task #${taskId}: the developer agent is at work.`,
  "task.dev-to-review": ({ taskId, round }) =>
    `🔍 Task #${taskId}, round ${round}: the changes are pushed and the reviewer is checking them.`,
  "task.review-to-dev": ({ taskId, round, findings }, f) =>
    `↩️ Task #${taskId}, round ${round}: the reviewer left ${f.count(findings, { one: "remark", other: "remarks" })}; ` +
    "the developer is addressing them.",
  "task.success": ({ taskId, branch, commit, prUrl }) =>
    `🎉 Task #${taskId} is done: the reviewer approved the changes.\nBranch: <code>${branch}</code>` +
    (commit ? `\nCommit: <code>${commit}</code>` : "") +
    (prUrl ? `\nPull request: <a href="${prUrl}">${prUrl}</a>` : ""),
  "task.failed": ({ taskId, reason, findings }) =>
    `❌ Task #${taskId} failed.\nWhy: ${reason}\n` +
    (findings.length > 0 ? `<b>Remaining findings:</b>\n${bullets(findings)}\n` : "") +
    "An analysis of what went wrong will follow.",
  "task.timeout": ({ taskId }) =>
    `⏱ Task #${taskId} ran out of time. The work done so far is committed and pushed, and the agent session is kept: ` +
    `/continue ${taskId} picks up where it stopped.`,
  "task.postmortem": ({ taskId, cause, why, whatToDo }) =>
    `🔍 Analysis of task #${taskId} (after ${cause === "failed" ? "the failure" : "the timeout"})\n` +
    `<b>Why it happened:</b> ${why}\n<b>What to do:</b> ${whatToDo}`,
  "task.postmortem-unavailable": ({ taskId, reason }) =>
    `🔍 Task #${taskId}: the analysis of what went wrong is unavailable — ${reason ?? "the postmortem agent could not finish"}. ` +
    `/status ${taskId} shows the runs; /retry ${taskId} runs the task again.`,
  "task.budget-exceeded": ({ taskId, spentUsd, budgetUsd }, f) =>
    `💰 Task #${taskId} is paused: it has spent ${f.costUsd(spentUsd)}, more than its budget of ${f.costUsd(budgetUsd)}. ` +
    "The next agent run waits for you. Continue gives it another budget; Stop ends the task (pushed work stays).",
  "task.budget-extended": ({ taskId, budgetUsd }, f) =>
    `▶️ Task #${taskId} continues with a budget of ${f.costUsd(budgetUsd)}.`,
  "task.not-paused": ({ taskId, status }) =>
    `Task #${taskId} is not waiting on its budget any more: it is ${STATUS[status]}.`,
  "task.analyst-error": ({ taskId, problem, then }) =>
    `⚠️ Task #${taskId}: the analysis failed — ${ANALYST_PROBLEM[problem]}. ` +
    (then === "retrying"
      ? "I'm analysing your message again, nothing to do for you."
      : "Send your message again, or /skip to draft the task from what I have."),
};
