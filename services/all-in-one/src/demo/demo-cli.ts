import { startupFailureMessage } from "@ratatoskr/service-host";
import { runDemo } from "./demo.ts";
import { demoStyle, useColour } from "./demo-style.ts";
import { DemoStopped } from "./demo-teardown.ts";

export interface DemoCliIo {
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown };
  exit(code: number): void;
  signals: { on(signal: NodeJS.Signals, listener: () => void): unknown };
}

const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
const SAME_KEYPRESS_MS = 1_000;

/**
 * `pnpm demo`: runs the demo until Ctrl-C (or SIGTERM/SIGHUP), at any moment — starting, mid
 * conversation or idle. One signal stops it: everything started is stopped, the temporary
 * directories, the run's schema and queues are removed, and it exits 0 with one line saying so
 * (1 if something could not be stopped). A second signal (a second later or more; sooner it is the
 * same Ctrl-C forwarded by pnpm) exits 1 at once (opencode's watchdog
 * still removes opencode). A start-up problem (Postgres, Redis, a busy port) is one line, exit 1.
 */
export async function runDemoCli(env: NodeJS.ProcessEnv, io: DemoCliIo): Promise<void> {
  const style = demoStyle(useColour(io.stdout.isTTY === true, env));
  const print = (line: string) => void io.stdout.write(`${line}\n`);
  const controller = new AbortController();
  let firstSignalAt = 0;
  for (const signal of STOP_SIGNALS) {
    io.signals.on(signal, () => {
      if (controller.signal.aborted) {
        // `pnpm demo`: the terminal's Ctrl-C reaches pnpm and node, and pnpm forwards its copy to
        // node: one keypress, two signals. Only a signal a moment later is a second Ctrl-C.
        if (Date.now() - firstSignalAt > SAME_KEYPRESS_MS) io.exit(1);
        return;
      }
      firstSignalAt = Date.now();
      print(style.dim(`\nStopping the demo (${signal})…`));
      controller.abort();
    });
  }
  const stopped = (clean: boolean) => {
    print(
      clean
        ? style.dim("Demo stopped; its temporary directories, schema and queues are removed.")
        : style.warn("Demo stopped, but something could not be stopped cleanly."),
    );
    io.exit(clean ? 0 : 1);
  };
  try {
    const demo = await runDemo(env, print, { signal: controller.signal, style });
    if (!controller.signal.aborted)
      await new Promise((resolve) => controller.signal.addEventListener("abort", resolve, { once: true }));
    stopped(await demo.stop());
  } catch (err) {
    if (err instanceof DemoStopped) return stopped(true);
    const message =
      startupFailureMessage("demo", err) ??
      `demo failed: ${err instanceof Error ? err.message : String(err)}\n`;
    io.stderr.write(message);
    io.exit(1);
  }
}
