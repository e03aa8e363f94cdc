/**
 * Child process for lazy-loading tests: starts the all-in-one host (env from the parent), then
 * prints one JSON line telling, for each package named in argv, whether any of its CommonJS
 * modules was loaded, and shuts down.
 */
import { createRequire } from "node:module";
import { startHost } from "@ratatoskr/service-host";
import { ALL_SERVICES } from "../../src/services.ts";

const cache = createRequire(import.meta.url).cache;
const loaded = (pkg: string) => Object.keys(cache).some((path) => path.includes(`/node_modules/${pkg}/`));

const host = await startHost({ name: "all-in-one", services: ALL_SERVICES, handleSignals: false });
const report = Object.fromEntries(process.argv.slice(2).map((pkg) => [pkg, loaded(pkg)]));
await host.shutdown("loaded-packages probe done");
process.stdout.write(`${JSON.stringify(report)}\n`);
