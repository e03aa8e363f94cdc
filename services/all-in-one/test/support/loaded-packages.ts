/**
 * Child process for lazy-loading tests: starts the all-in-one host (env from the parent) and
 * prints one JSON line telling, for each module path named in argv (a package such as
 * `@bull-board`, or a path prefix inside one; `node:<internal module>` for one of node's own; or
 * `Intl.<formatter>`), whether a module under it was loaded (a formatter constructed) once started; with PROBE_IDLE_MS=<ms>, what was loaded after idling that long (the
 * idle time is what is tested: every periodic task runs in it); with PROBE_FETCH=<path>, the
 * status of a GET of that path (Bull Board's credentials) and what was loaded after it. Then it
 * shuts down.
 */
import { createRequire, register } from "node:module";
import { setTimeout as sleep } from "node:timers/promises";
import { MessageChannel } from "node:worker_threads";
// First, so the spy is in place before any service module is evaluated.
import { constructedIntl } from "./intl-spy.ts";
import { startHost } from "@ratatoskr/service-host";
import { ALL_SERVICES } from "../../src/services.ts";

const esModules = new Set<string>();
const { port1, port2 } = new MessageChannel();
port1.on("message", (url: string) => esModules.add(url));
port1.unref();
register("./esm-loads-hooks.mjs", import.meta.url, { data: { port: port2 }, transferList: [port2] });

const cache = createRequire(import.meta.url).cache;
const modules = process.argv.slice(2);
const isLoaded = (name: string, paths: string[]) => {
  if (name.startsWith("node:")) return (process as unknown as { moduleLoadList: string[] }).moduleLoadList.includes(`NativeModule ${name.slice("node:".length)}`);
  if (name.startsWith("Intl.")) return constructedIntl.has(name);
  return paths.some((path) => path.includes(`/node_modules/${name}`));
};
const loaded = () => {
  const paths = [...Object.keys(cache), ...esModules];
  return Object.fromEntries(modules.map((name) => [name, isLoaded(name, paths)]));
};

const host = await startHost({ name: "all-in-one", services: ALL_SERVICES, handleSignals: false });
const report: Record<string, unknown> = { started: loaded() };
const idleMs = Number(process.env.PROBE_IDLE_MS ?? 0);
if (idleMs > 0) {
  await sleep(idleMs);
  report.idled = loaded();
}
const path = process.env.PROBE_FETCH;
if (path) {
  const credentials = Buffer.from(`admin:${process.env.BULL_BOARD_PASSWORD}`).toString("base64");
  const res = await fetch(`${host.url}${path}`, { headers: { authorization: `Basic ${credentials}` } });
  report.fetched = { status: res.status, loaded: loaded() };
}
await host.shutdown("loaded-packages probe done");
process.stdout.write(`${JSON.stringify(report)}\n`);
