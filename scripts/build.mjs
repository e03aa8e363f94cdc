#!/usr/bin/env node
/**
 * `pnpm build`: compiles every package and service with tsc (one program, `.ts` imports rewritten
 * to `.js`) and places the output where each package.json's `default` export points:
 * `<package>/src/**` -> `<package>/dist/**` (same depth, so paths relative to a module stay valid),
 * and Prisma's generated client as `.js` beside its `.ts` sources.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const out = join(root, ".build");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const stamp = join(root, "node_modules", ".ratatoskr-build-stamp");

/** Newest modification time of the compiled inputs (sources, manifests, the build config). */
function newestInput() {
  let newest = statSync(join(root, "tsconfig.build.json")).mtimeMs;
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

if (process.argv.includes("--if-stale") && existsSync(stamp) && statSync(stamp).mtimeMs >= newestInput())
  process.exit(0);

// `pnpm start` and `pnpm demo` compile first when the sources changed: say so, or the first start
// sits silent for the 10-20 s tsc takes.
const started = Date.now();
console.error(
  process.argv.includes("--if-stale")
    ? "Compiling Ratatoskr (the sources changed since the last build)…"
    : "Compiling Ratatoskr…",
);
rmSync(out, { recursive: true, force: true });
execFileSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json")], { stdio: "inherit" });

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
writeFileSync(stamp, `${new Date().toISOString()}\n`);
console.error(`Compiled in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
