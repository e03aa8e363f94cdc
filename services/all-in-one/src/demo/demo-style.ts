/**
 * How the demo's transcript looks: colours only for a person at a terminal (never in a pipe or a
 * file, never with NO_COLOR set — https://no-color.org), the draft's buttons drawn as the chat
 * shows them, and service log lines reduced to one readable line each (no JSON, no stack trace).
 * Pure: the caller says whether stdout is a terminal.
 */
export interface DemoStyle {
  readonly colour: boolean;
  person(text: string): string;
  bot(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
  button(text: string): string;
  warn(text: string): string;
}

const sgr = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`;

export function useColour(isTTY: boolean, env: NodeJS.ProcessEnv): boolean {
  return isTTY && !env.NO_COLOR && env.TERM !== "dumb";
}

export function demoStyle(colour: boolean): DemoStyle {
  const plain = (text: string) => text;
  if (!colour)
    return { colour, person: plain, bot: plain, dim: plain, bold: plain, button: plain, warn: plain };
  return {
    colour,
    person: sgr(36, 39), // cyan
    bot: plain,
    dim: sgr(2, 22),
    bold: sgr(1, 22),
    button: (text) => sgr(7, 27)(text), // reverse video: a key to press
    warn: sgr(33, 39), // yellow
  };
}

/** `[ ✅ Approve ]  [ ✏️ Edit ]`, one line per keyboard row. */
export function renderButtons(
  keyboard: ReadonlyArray<ReadonlyArray<{ text: string }>> | undefined,
  style: DemoStyle,
): string[] {
  return (keyboard ?? [])
    .filter((row) => row.length > 0)
    .map((row) => row.map((button) => style.button(`[ ${button.text} ]`)).join("  "));
}

interface LogLine {
  level?: string | number;
  msg?: string;
  component?: string;
  err?: { message?: string };
}

/**
 * A service's JSON log line as one line of the transcript (`⚠ analyst: … (why)`), or undefined
 * for a line that is not JSON. The stack stays out; the message and the error's own text stay.
 */
export function summariseLogLine(line: string, style: DemoStyle): string | undefined {
  let entry: LogLine;
  try {
    entry = JSON.parse(line) as LogLine;
  } catch {
    return undefined;
  }
  const where = entry.component ? `${entry.component}: ` : "";
  const why = entry.err?.message ? ` (${entry.err.message.split("\n")[0]})` : "";
  return style.warn(`  ⚠ ${where}${entry.msg ?? ""}${why}`);
}
