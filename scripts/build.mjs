#!/usr/bin/env node
/**
 * `pnpm build`: compiles every package and service with tsc (one program, `.ts` imports rewritten
 * to `.js`) and places the output where each package.json's `default` export points:
 * `<package>/src/**` -> `<package>/dist/**` (same depth, so paths relative to a module stay valid),
 * and Prisma's generated client as `.js` beside its `.ts` sources. Each service's output is then
 * replaced by its bundle (`bundle-services.mjs`), entry `services/<name>/dist/main.js` as before.
 *
 * SIGINT, SIGTERM and SIGHUP are one stop: tsc is stopped, one line says so, and the exit status
 * is STOPPED. `pnpm start` and `pnpm demo` trap the signals in their shell (untrapped, a Ctrl-C
 * ends the shell at once and pnpm prints ELIFECYCLE), so it waits for this script, and take
 * STOPPED as a stop: nothing is started and they exit 0, as a stopped service does.
 */
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setImmediate } from "node:timers/promises";
import { bundleServices } from "./bundle-services.mjs";

const root = new URL("..", import.meta.url).pathname;
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const stamp = join(root, "node_modules", ".ratatoskr-build-stamp");
const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"];
/** What a shell reports for a Ctrl-C: the exit status of a stopped build (package.json's scripts know it). */
const STOPPED = 130;

/** Never throws: once the terminal is closed (SIGHUP) every write fails with EIO. */
function say(line) {
  try {
    process.stderr.write(`${line}\n`);
  } catch {
    // nobody is left to read it
  }
}
process.stderr.on("error", () => undefined);

/** The first stop signal; later ones (pnpm forwards its own copy of a Ctrl-C) are the same stop. */
let stoppedBy;
const stopping = new AbortController();
for (const signal of STOP_SIGNALS) {
  process.on(signal, () => {
    stoppedBy ??= signal;
    stopping.abort();
  });
}

/** Newest modification time of the compiled inputs (sources, manifests, the build's config and scripts). */
function newestInput() {
  let newest = Math.max(
    ...["tsconfig.build.json", "scripts/build.mjs", "scripts/bundle-services.mjs"].map((file) => statSync(join(root, file)).mtimeMs),
  );
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name === "dist") continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts") || entry.name === "package.json")
        newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  for (const group of ["packages", "services"]) walk(join(root, group));
  return newest;
}

/** Runs tsc into `out`; resolves with its exit code, or the signal that ended it. */
function compile(out) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json"), "--outDir", out], {
      stdio: "inherit",
      signal: stopping.signal,
    });
    child.on("error", (err) => {
      if (err.name !== "AbortError") reject(err);
    });
    child.on("exit", (code, signal) => resolve(code ?? signal));
  });
}

/** `endedBy`: the signal that ended tsc, which names the stop when this process has not heard it yet. */
function stop(out, endedBy) {
  rmSync(out, { recursive: true, force: true });
  say(`Compile stopped (${stoppedBy ?? endedBy ?? "by a signal"}); nothing was started.`);
  process.exit(STOPPED);
}

if (process.argv.includes("--if-stale") && existsSync(stamp) && statSync(stamp).mtimeMs >= newestInput())
  process.exit(0);

// `pnpm start` and `pnpm demo` compile first when the sources changed: say so, or the first start
// sits silent for the 10-20 s tsc takes.
const started = Date.now();
say(
  process.argv.includes("--if-stale")
    ? "Compiling Ratatoskr (the sources changed since the last build)…"
    : "Compiling Ratatoskr…",
);
// A directory of its own, so two builds at once do not remove each other's output.
const out = mkdtempSync(join(tmpdir(), "ratatoskr-build-"));
const result = await compile(out);
// A terminal's Ctrl-C reaches tsc too, which may end before this process hears of it.
if (stoppedBy || STOP_SIGNALS.includes(result)) stop(out, STOP_SIGNALS.includes(result) ? result : undefined);
if (result !== 0) {
  rmSync(out, { recursive: true, force: true });
  say(`Compile failed (tsc ${typeof result === "number" ? `exited ${result}` : `ended by ${result}`}).`);
  process.exit(1);
}

for (const group of ["packages", "services"]) {
  for (const name of readdirSync(join(out, group))) {
    const built = join(out, group, name);
    const target = join(root, group, name);
    if (existsSync(join(built, "src"))) {
      rmSync(join(target, "dist"), { recursive: true, force: true });
      cpSync(join(built, "src"), join(target, "dist"), { recursive: true });
    }
    if (existsSync(join(built, "generated")))
      cpSync(join(built, "generated"), join(target, "generated"), { recursive: true });
  }
}
rmSync(out, { recursive: true, force: true });
try {
  await bundleServices(root);
} catch (error) {
  say(`Bundling the services failed (scripts/bundle-services.mjs): ${error instanceof Error ? error.message : error}`);
  process.exit(1);
}
writeFileSync(stamp, `${new Date().toISOString()}\n`);
say(`Compiled in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
// A stop that came while the output was copied: the build is whole, but nothing is started.
await setImmediate();
if (stoppedBy) stop(out);
