// Stop signals first, before the rest is loaded: a Ctrl-C in the first second is a stop too.
import { bufferStopSignals } from "@ratatoskr/runtime/stop-signals";

const signals = bufferStopSignals();

/**
 * All six services in one process: same code, same queues, one health server. With no front
 * door configured (no Telegram token, no Gitea) there is nothing to serve, so it runs the demo.
 * The demo (fake Telegram, scripted model: the test kit) and the services are imported only on
 * the path that runs them, so a production process never holds the demo's modules.
 */
const hasFrontDoor = Boolean(process.env.TELEGRAM_BOT_TOKEN || process.env.GITEA_URL);
if (process.env.RATATOSKR_DEMO === "true" || !hasFrontDoor) {
  const { runDemoCli } = await import("./demo/demo-cli.ts").catch((error: unknown) => {
    // The production image leaves the test kit (fake Telegram, scripted model) out, and the demo with it.
    if ((error as { code?: string }).code !== "ERR_MODULE_NOT_FOUND") throw error;
    console.error(
      "No front door is configured (TELEGRAM_BOT_TOKEN or GITEA_URL), and demo mode is not in this build: " +
        "it needs the test kit, which the production image leaves out. Set a front door, or run `pnpm demo` in a checkout.",
    );
    process.exit(2);
  });
  await runDemoCli(process.env, {
    stdout: process.stdout,
    stderr: process.stderr,
    exit: (code) => process.exit(code),
    signals,
  }, process.argv[2]);
} else {
  const [{ runServiceMain }, { ALL_SERVICES }] = await Promise.all([
    import("@ratatoskr/service-host"),
    import("./services.ts"),
  ]);
  await runServiceMain({ name: "all-in-one", services: ALL_SERVICES }, undefined, signals);
}
