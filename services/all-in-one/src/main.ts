import { runServiceMain } from "@ratatoskr/service-host";

/**
 * All six services in one process: same code, same queues, one health server. With no front
 * door configured (no Telegram token, no Gitea) there is nothing to serve, so it runs the demo.
 * The demo (fake Telegram, scripted model: the test kit) and the services are imported only on
 * the path that runs them, so a production process never holds the demo's modules.
 */
const hasFrontDoor = Boolean(process.env.TELEGRAM_BOT_TOKEN || process.env.GITEA_URL);
if (process.env.RATATOSKR_DEMO === "true" || !hasFrontDoor) {
  const { runDemoCli } = await import("./demo/demo-cli.ts");
  await runDemoCli(process.env, {
    stdout: process.stdout,
    stderr: process.stderr,
    exit: (code) => process.exit(code),
    signals: process,
  });
} else {
  const { ALL_SERVICES } = await import("./services.ts");
  await runServiceMain({ name: "all-in-one", services: ALL_SERVICES });
}
