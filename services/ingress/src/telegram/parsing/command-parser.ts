/** The commands the bot understands (T1), in the order `/help` and the command menu list them. */
export const BOT_COMMANDS = [
  "start",
  "cancel",
  "skip",
  "retry",
  "status",
  "continue",
  "attach",
  "help",
] as const;
export type BotCommandName = (typeof BOT_COMMANDS)[number];

export type ParsedText =
  | { kind: "text"; text: string }
  | { kind: "command"; command: BotCommandName; args: string }
  /** `/whatever`: answered with the command list. `command` keeps the slash, as typed. */
  | { kind: "unknown-command"; command: string }
  /** `/cmd@other_bot` in a group: meant for another bot, so not ours to answer. */
  | { kind: "foreign-command" };

/** How much of a wrong command or argument is echoed back to the person. */
const MAX_ECHO_CHARS = 32;

const COMMAND_PATTERN = /^\/([^\s@]+)(?:@(\S*))?(?:\s+([\s\S]*))?$/;

function isBotCommand(name: string): name is BotCommandName {
  return (BOT_COMMANDS as readonly string[]).includes(name);
}

/**
 * Splits a message into a command (`/cmd`, `/cmd@botname`, arguments after whitespace) or free
 * text. `botUsername` is unknown until getMe answered; then any `@suffix` counts as ours.
 */
export function parseText(raw: string, botUsername?: string): ParsedText {
  const text = raw.trim();
  const match = COMMAND_PATTERN.exec(text);
  if (!match) return { kind: "text", text };
  const [, name = "", mention, args = ""] = match;
  if (mention !== undefined && botUsername && mention.toLowerCase() !== botUsername.toLowerCase()) {
    return { kind: "foreign-command" };
  }
  const command = name.toLowerCase();
  if (!isBotCommand(command))
    return { kind: "unknown-command", command: `/${name.slice(0, MAX_ECHO_CHARS)}` };
  return { kind: "command", command, args: args.trim() };
}

/** Task ids are Postgres `integer`s: anything larger cannot name a task. */
const MAX_TASK_ID = 2_147_483_647;

export type TaskNumber = { ok: true; taskId: number } | { ok: false; given: string | null };

/** `N` of `/status N` and friends: `12` or `#12`. `given` is null when nothing was typed. */
export function parseTaskNumber(args: string): TaskNumber {
  const given = args.trim();
  if (given === "") return { ok: false, given: null };
  const match = /^#?(\d{1,10})$/.exec(given);
  const taskId = match ? Number(match[1]) : Number.NaN;
  if (taskId >= 1 && taskId <= MAX_TASK_ID) return { ok: true, taskId };
  const echoed = given.length > MAX_ECHO_CHARS ? `${given.slice(0, MAX_ECHO_CHARS)}…` : given;
  return { ok: false, given: echoed };
}
