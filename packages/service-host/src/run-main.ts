import { ConfigError, StartupError } from "@ratatoskr/runtime";
import { bufferStopSignals, onStopSignals, type SignalSource } from "@ratatoskr/runtime/stop-signals";
import { installProcessFaultHandlers, startHost, type RunningHost, type StartHostOptions } from "./start-host.ts";

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
 * One keypress is one stop, at any moment: `signals` (the entry's buffer, taken over before it
 * loaded anything) stops the host gracefully once it runs, and a stop while it is still starting
 * ends the start-up (exit 0: nothing durable is half-done then); pnpm's copy of the same Ctrl-C is
 * ignored, a signal a second later forces exit 1.
 */
export async function runServiceMain(
  opts: StartHostOptions,
  io: MainIo = PROCESS_IO,
  signals: SignalSource = bufferStopSignals(),
): Promise<RunningHost | undefined> {
  let host: RunningHost | undefined;
  let stopped = false;
  onStopSignals(signals, {
    stop: (signal) => {
      stopped = true;
      if (host) return void host.shutdown(signal).then((result) => io.exit(result.clean ? 0 : 1));
      io.stderr(`${opts.name} stopped (${signal}) while starting.\n`);
      io.exit(0);
    },
    force: () => io.exit(1),
  });
  try {
    host = await startHost({ ...opts, handleSignals: false });
  } catch (error) {
    if (stopped) return undefined;
    const message = startupFailureMessage(opts.name, error);
    if (message === undefined) throw error;
    io.stderr(message);
    io.exit(1);
    return undefined;
  }
  installProcessFaultHandlers(host.context.logger, host.context.shutdown, io.exit);
  if (stopped) await host.shutdown("stopped while starting").then((result) => io.exit(result.clean ? 0 : 1));
  return host;
}
