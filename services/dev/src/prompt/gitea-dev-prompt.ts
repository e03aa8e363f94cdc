import { formatFinding, isBlankText, untrustedBlock, UNTRUSTED_REMINDER, type ReviewFinding } from "@ratatoskr/contracts";

export interface GiteaDevPromptInput {
  taskId: number;
  /** `implement`, `fix`, or `iterate` (a PR of the agent's). */
  command: string;
  /** `owner/name#N` (issue) or `owner/name!N` (PR). */
  target: string;
  round: number;
  maxRounds: number;
  requester: string;
  /** Issue or PR title and description, already stripped of hidden text by intake. */
  title: string | null;
  body: string | null;
  /** What the person wrote after `/agent <command>`. */
  message: string | null;
  /** The latest reviewed plan, when `/agent plan` made one. */
  plan?: string | undefined;
  workspaces: readonly string[];
  findings: readonly ReviewFinding[];
}

/** A Gitea user's text (Markdown), fenced as untrusted with what its reader does not see removed. */
function block(title: string, text: string | null | undefined): string[] {
  return isBlankText(text, "markdown") ? [] : ["", `${title}:`, untrustedBlock(text, { label: title, markup: "markdown" })];
}

/** Text Ratatoskr or an agent assembled from people's text (findings, workspace lines): fenced, plain. */
function lines(title: string, items: readonly string[]): string[] {
  return items.length > 0 ? ["", `${title}:`, untrustedBlock(items.join("\n"), { label: title })] : [];
}

/**
 * The dev agent's prompt for a Gitea command. Every text a Gitea user wrote is fenced as
 * untrusted, hidden parts removed (G2, S4).
 */
export function buildGiteaDevPrompt(input: GiteaDevPromptInput): string {
  const what =
    input.command === "fix"
      ? "Fix requested on a pull request: make one focused change on its branch."
      : input.command === "iterate"
        ? "New request on the pull request you opened: revise your change."
        : "Implement the issue.";
  return [
    `Gitea command #${input.taskId}: \`/agent ${input.command}\` by @${input.requester} on ${input.target}, round ${input.round} of at most ${input.maxRounds}.`,
    what,
    "",
    ...block("Title", input.title || "(untitled)"),
    ...block("Description", input.body),
    ...block("The reviewed plan to follow", input.plan),
    ...block(`Request from @${input.requester}`, input.message),
    ...lines("Repository (git working tree, already on the branch)", input.workspaces),
    ...lines(`The reviewer rejected round ${input.round - 1}; address each finding`, input.findings.map((f) => `- ${formatFinding(f)}`)),
    "",
    UNTRUSTED_REMINDER,
    "Work only inside this directory. Do not commit or push: Ratatoskr commits and pushes your changes.",
  ].join("\n");
}
