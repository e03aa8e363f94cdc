import type { ScriptTurn } from "./script-types.ts";

/** Small constructors so test scripts read like the conversation they describe. */
export const reply = {
  text: (text: string, timing: { delayMs?: number; chunkDelayMs?: number; chunks?: number } = {}): ScriptTurn => ({
    text,
    ...timing,
  }),
  /** A strict-JSON verdict as the whole answer. */
  json: (value: unknown, timing: { delayMs?: number; holdUntil?: Promise<unknown> } = {}): ScriptTurn => ({ text: JSON.stringify(value), ...timing }),
  tool: (name: string, args: Record<string, unknown>, timing: { delayMs?: number } = {}): ScriptTurn => ({
    toolCalls: [{ name, args }],
    ...timing,
  }),
  /** opencode's `read` tool (1.18: `path`, not `filePath`; a wrong key is an error the model reads). */
  read: (path: string, range: { offset?: number; limit?: number } = {}): ScriptTurn => ({
    toolCalls: [{ name: "read", args: { path, ...range } }],
  }),
  /** opencode's `write` tool: `path` is relative to the session's directory. */
  write: (path: string, content: string): ScriptTurn => ({ toolCalls: [{ name: "write", args: { path, content } }] }),
  edit: (path: string, oldString: string, newString: string): ScriptTurn => ({
    toolCalls: [{ name: "edit", args: { path, oldString, newString } }],
  }),
  bash: (command: string): ScriptTurn => ({ toolCalls: [{ name: "bash", args: { command, description: command } }] }),
  httpError: (status: number, message: string): ScriptTurn => ({ httpError: { status, message } }),
};
