import { startOpencodeServer } from "../../src/opencode-server/index.ts";

// The smallest process that runs `opencode serve`: starts one, says where it is, and waits with
// no signal handlers of its own, so a signal ends it by the default action (no cleanup runs).
const server = await startOpencodeServer({ provider: { baseUrl: "http://127.0.0.1:9" } });
process.stdout.write(
  `${JSON.stringify({ group: server.processGroup, rootDir: server.rootDir, url: server.url })}\n`,
);
setInterval(() => undefined, 60_000);
