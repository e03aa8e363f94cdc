import { runServiceMain } from "@ratatoskr/service-host";
import { runDemoCli } from "./demo/demo-cli.ts";
import { ALL_SERVICES } from "./services.ts";

/**
 * All six services in one process: same code, same queues, one health server. With no front
 * door configured (no Telegram token, no Gitea) there is nothing to serve, so it runs the demo.
 */
const hasFrontDoor = Boolean(process.env.TELEGRAM_BOT_TOKEN || process.env.GITEA_URL);
if (process.env.RATATOSKR_DEMO === "true" || !hasFrontDoor) {
  await runDemoCli(process.env, {
    stdout: process.stdout,
    stderr: process.stderr,
    exit: (code) => process.exit(code),
    signals: process,
  });
} else {
  await runServiceMain({ name: "all-in-one", services: ALL_SERVICES });
}
