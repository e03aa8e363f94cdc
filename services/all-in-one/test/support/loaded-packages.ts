/**
 * Child process for lazy-loading tests: starts the all-in-one host (env from the parent) and
 * prints one JSON line telling, for each package named in argv, whether any of its CommonJS
 * modules was loaded once started, and, with PROBE_FETCH=<path>, the status of a GET of that path
 * (Bull Board's credentials) and what was loaded after it. Then it shuts down.
 */
import { createRequire } from "node:module";
import { startHost } from "@ratatoskr/service-host";
import { ALL_SERVICES } from "../../src/services.ts";

const cache = createRequire(import.meta.url).cache;
const packages = process.argv.slice(2);
const loaded = () =>
  Object.fromEntries(
    packages.map((pkg) => [pkg, Object.keys(cache).some((path) => path.includes(`/node_modules/${pkg}/`))]),
  );

const host = await startHost({ name: "all-in-one", services: ALL_SERVICES, handleSignals: false });
const report: Record<string, unknown> = { started: loaded() };
const path = process.env.PROBE_FETCH;
if (path) {
  const credentials = Buffer.from(`admin:${process.env.BULL_BOARD_PASSWORD}`).toString("base64");
  const res = await fetch(`${host.url}${path}`, { headers: { authorization: `Basic ${credentials}` } });
  report.fetched = { status: res.status, loaded: loaded() };
}
await host.shutdown("loaded-packages probe done");
process.stdout.write(`${JSON.stringify(report)}\n`);
