import { ConfigError, StartupError } from "@ratatoskr/runtime";
import { startHost, type RunningHost, type StartHostOptions } from "./start-host.ts";

export interface MainIo {
  stderr: (text: string) => void;
  exit: (code: number) => void;
}

const PROCESS_IO: MainIo = {
  stderr: (text) => process.stderr.write(text),
  exit: (code) => process.exit(code),
};

/**
 * Text for a start-up failure a person fixes outside the code (configuration, Redis, Postgres),
 * or undefined for a bug, which keeps its stack trace.
 */
export function startupFailureMessage(name: string, error: unknown): string | undefined {
  if (error instanceof ConfigError) return `${name} cannot start. ${error.message}\n`;
  if (error instanceof StartupError) return `${name} cannot start: ${error.message}\n`;
  return undefined;
}

/**
 * What every service entry (and the all-in-one) runs: starts the host; a configuration, Redis or
 * Postgres problem is printed as plain text without a stack trace, and the process exits 1.
 */
export async function runServiceMain(
  opts: StartHostOptions,
  io: MainIo = PROCESS_IO,
): Promise<RunningHost | undefined> {
  try {
    return await startHost(opts);
  } catch (error) {
    const message = startupFailureMessage(opts.name, error);
    if (message === undefined) throw error;
    io.stderr(message);
    io.exit(1);
    return undefined;
  }
}
