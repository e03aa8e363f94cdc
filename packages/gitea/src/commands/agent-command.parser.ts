/** Commands that run agents and hold a place in the issue/PR's queue (G3). */
export const WORK_COMMANDS = ["plan", "discuss", "iterate", "implement", "fix"] as const;
/** Commands answered at once, outside the queue (G7; `continue`/`stop` answer a budget pause, P5). */
export const CONTROL_COMMANDS = ["status", "cancel", "continue", "stop"] as const;

export type WorkCommand = (typeof WORK_COMMANDS)[number];
export type ControlCommand = (typeof CONTROL_COMMANDS)[number];
export type AgentCommandWord = WorkCommand | ControlCommand;

/** Which commands each kind of target accepts. */
export const COMMANDS_BY_TARGET: Record<"issue" | "pr", readonly AgentCommandWord[]> = {
  issue: ["plan", "discuss", "iterate", "implement", "status", "cancel", "continue", "stop"],
  pr: ["iterate", "fix", "status", "cancel", "continue", "stop"],
};

export type ParsedAgentComment =
  /** The first line is not `/agent …`: not for us. */
  | { kind: "not-a-command" }
  | { kind: "command"; command: AgentCommandWord; message: string }
  /** `/agent` with a missing, unknown or misplaced subcommand: answered with the usage. */
  | { kind: "usage"; given: string };

const PREFIX = /^\/agent(?:\s+|$)/i;

/**
 * Parses `/agent <command> [message]` from a comment's first line; the message is the rest of
 * that line plus every following line. Whitespace (including a BOM) before `/agent` is ignored.
 */
export function parseAgentComment(body: string, target: "issue" | "pr"): ParsedAgentComment {
  const text = body
    .replace(/^\uFEFF/, "")
    .replace(/\r\n?/g, "\n")
    .trimStart();
  const newline = text.indexOf("\n");
  const firstLine = (newline === -1 ? text : text.slice(0, newline)).trimEnd();
  if (!PREFIX.test(firstLine)) return { kind: "not-a-command" };
  const afterPrefix = firstLine.replace(PREFIX, "");
  const word = afterPrefix.split(/\s+/, 1)[0] ?? "";
  const command = word.toLowerCase();
  if (!(COMMANDS_BY_TARGET[target] as readonly string[]).includes(command))
    return { kind: "usage", given: word };
  const more = newline === -1 ? "" : text.slice(newline + 1);
  const firstRest = afterPrefix.slice(word.length).trim();
  const message = [firstRest, more.trim()].filter(Boolean).join("\n");
  return { kind: "command", command: command as AgentCommandWord, message };
}

/** True when the comment's first line starts with `/agent` (cheap check for the webhook route). */
export function looksLikeAgentCommand(body: string): boolean {
  return PREFIX.test(
    body
      .replace(/^\uFEFF/, "")
      .trimStart()
      .split(/\r?\n/, 1)[0] ?? "",
  );
}

/** The usage text shown in the status comment for an unknown or misplaced command. */
export function agentUsage(target: "issue" | "pr"): string {
  const lines =
    target === "issue"
      ? [
          "`/agent plan [message]` — write a plan for this issue, reviewed by the reviewer",
          "`/agent discuss [message]` — answer a question about the current plan, no changes",
          "`/agent iterate [message]` — revise the plan",
          '`/agent implement [message]` — implement the issue, open a PR "Closes #N"',
        ]
      : [
          "`/agent iterate [message]` — resume the agent implementation and its reviewer once",
          "`/agent fix [message]` — a fresh one-shot fix on this PR's branch, one commit",
        ];
  return [
    ...lines,
    "`/agent status` — the running and queued commands here",
    "`/agent cancel` — cancel the running command (or, if none runs, the next queued one)",
    "`/agent continue [+USD]` — resume the command paused by its budget, with that much more to spend",
    "`/agent stop` — end the command paused by its budget (what it pushed stays)",
  ].join("\n");
}
