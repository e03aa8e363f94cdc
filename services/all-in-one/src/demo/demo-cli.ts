import { onStopSignals } from "@ratatoskr/runtime/stop-signals";
import { startupFailureMessage } from "@ratatoskr/service-host";
import { runDemo } from "./demo.ts";
import { runGiteaDemo } from "./demo-gitea.ts";
import { demoStyle, useColour } from "./demo-style.ts";
import { DemoStopped } from "./demo-teardown.ts";

type Output = { write(text: string): unknown; on?(event: "error", listener: (err: Error) => void): unknown };

export interface DemoCliIo {
  stdout: Output & { isTTY?: boolean };
  stderr: Output;
  exit(code: number): void;
  signals: { on(signal: NodeJS.Signals, listener: () => void): unknown };
}

/** `pnpm demo` plays the Telegram door; `pnpm demo gitea` the Gitea door. */
export const DEMO_DOORS = ["telegram", "gitea"] as const;
export type DemoDoorName = (typeof DEMO_DOORS)[number];

/**
 * Writes that never throw: once the terminal is closed (SIGHUP) every write fails with EIO or
 * EPIPE, thrown or emitted; the demo must still stop and clean up, with nobody left to read it.
 */
function tolerant(out: Output): (text: string) => void {
  let gone = false;
  out.on?.("error", () => (gone = true));
  return (text) => {
    if (gone) return;
    try {
      out.write(text);
    } catch {
      gone = true;
    }
  };
}

/**
 * `pnpm demo [gitea]`: runs the demo until Ctrl-C (or SIGTERM/SIGHUP), at any moment — starting, mid
 * conversation or idle. One signal stops it: everything started is stopped, the temporary
 * directories, the run's schema and queues are removed, and it exits 0 with one line saying so
 * (1 if something could not be stopped). A second signal (a second later or more; sooner it is the
 * same Ctrl-C forwarded by pnpm) exits 1 at once (opencode's watchdog
 * still removes opencode). A start-up problem (Postgres, Redis, a busy port) is one line, exit 1.
 */
export async function runDemoCli(env: NodeJS.ProcessEnv, io: DemoCliIo, door: string = "telegram"): Promise<void> {
  if (!(DEMO_DOORS as readonly string[]).includes(door)) {
    tolerant(io.stderr)(`unknown demo "${door}": \`pnpm demo\` plays the Telegram door, \`pnpm demo gitea\` the Gitea door\n`);
    return io.exit(2);
  }
  const style = demoStyle(useColour(io.stdout.isTTY === true, env));
  const write = tolerant(io.stdout);
  const writeError = tolerant(io.stderr);
  const print = (line: string) => write(`${line}\n`);
  const controller = new AbortController();
  // `pnpm demo`: one keypress reaches pnpm and node, and pnpm forwards its copy: one stop.
  onStopSignals(io.signals, {
    stop: (signal) => {
      print(style.dim(`\nStopping the demo (${signal})…`));
      controller.abort();
    },
    force: () => io.exit(1),
  });
  const stopped = (clean: boolean) => {
    print(
      clean
        ? style.dim("Demo stopped; its temporary directories, schema and queues are removed.")
        : style.warn("Demo stopped, but something could not be stopped cleanly."),
    );
    io.exit(clean ? 0 : 1);
  };
  try {
    const play = door === "gitea" ? runGiteaDemo : runDemo;
    const demo = await play(env, print, { signal: controller.signal, style });
    if (!controller.signal.aborted)
      await new Promise((resolve) => controller.signal.addEventListener("abort", resolve, { once: true }));
    stopped(await demo.stop());
  } catch (err) {
    if (err instanceof DemoStopped) return stopped(true);
    const message =
      startupFailureMessage("demo", err) ??
      `demo failed: ${err instanceof Error ? err.message : String(err)}\n`;
    writeError(message);
    io.exit(1);
  }
}
