#!/usr/bin/env node
/**
 * Run by the image build (Dockerfile) on the output of `pnpm install --prod`: removes what a
 * production install still carries although nothing at run time loads it.
 *
 * - Dev tools pnpm links in as *optional peers*: `@prisma/client` declares `prisma` (the CLI, with
 *   Prisma Studio, PGlite, effect, React …) and `typescript` as optional peers, and the lockfile
 *   resolves them because the workspace root has both as devDependencies, so `--prod` keeps them.
 *   The running client needs neither. They are unlinked, and every package that only they reached
 *   is deleted (a walk of the symlinks from the workspace's own node_modules, as Node resolves them).
 * - Prisma's query compilers for the databases and build we do not use: the generated client
 *   imports exactly one (`query_compiler_<build>_bg.postgresql…`); the others and the source maps go.
 *
 * Prints what it removed and how much. Usage: node scripts/prune-production.mjs <dir>
 */
import {
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
} from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const OPTIONAL_PEER_DEV_TOOLS = new Set(["prisma", "typescript"]);

const root = resolve(process.argv[2] ?? ".");
const store = join(root, "node_modules", ".pnpm");

/** Sizes in bytes of a file tree (symlinks not followed). */
function sizeOf(path) {
  const stat = lstatSync(path);
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, name) => sum + sizeOf(join(path, name)), 0);
}

/** Entries of a node_modules directory as `[name, path]`, scoped packages expanded. */
function entries(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    if (name.startsWith(".")) return [];
    const path = join(dir, name);
    if (name.startsWith("@"))
      return readdirSync(path).map((inner) => [`${name}/${inner}`, join(path, inner)]);
    return [[name, path]];
  });
}

/** The `.pnpm/<entry>` a path lies in, or undefined outside the virtual store. */
function storeEntry(path) {
  const rel = relative(store, path);
  if (rel.startsWith("..") || rel === "") return undefined;
  return rel.split("/")[0];
}

/** The workspace's importers: the root and every package/service that has a manifest. */
function importers() {
  const dirs = [root];
  for (const group of ["packages", "services"])
    for (const name of existsSync(join(root, group)) ? readdirSync(join(root, group)) : [])
      if (existsSync(join(root, group, name, "package.json"))) dirs.push(join(root, group, name));
  return dirs;
}

const reached = new Set();
const unlinked = [];
function visit(dir) {
  for (const [name, path] of entries(dir)) {
    if (OPTIONAL_PEER_DEV_TOOLS.has(name) && storeEntry(dir) !== undefined) {
      unlinked.push(relative(root, path));
      rmSync(path, { force: true });
      continue;
    }
    let real;
    try {
      real = realpathSync(path);
    } catch {
      continue; // a dangling link (e.g. a workspace package the image leaves out)
    }
    const entry = storeEntry(real);
    if (entry === undefined || reached.has(entry)) continue;
    reached.add(entry);
    // A package's dependencies are its siblings in `.pnpm/<entry>/node_modules`.
    visit(join(store, entry, "node_modules"));
  }
}
for (const dir of importers()) visit(join(dir, "node_modules"));

let freed = 0;
const removed = [];
for (const entry of readdirSync(store)) {
  if (entry === "node_modules" || entry.startsWith(".") || entry.endsWith(".yaml") || reached.has(entry))
    continue;
  const path = join(store, entry);
  if (!statSync(path).isDirectory()) continue;
  freed += sizeOf(path);
  removed.push(entry);
  rmSync(path, { recursive: true, force: true });
}

// Links left pointing at what was removed (the hoisted `.pnpm/node_modules` holds one per package).
function dropDangling(dir) {
  for (const [, path] of entries(dir)) {
    if (!lstatSync(path).isSymbolicLink()) continue;
    const target = resolve(dirname(path), readlinkSync(path));
    if (!existsSync(target)) rmSync(path, { force: true });
  }
}
dropDangling(join(store, "node_modules"));
for (const entry of reached) dropDangling(join(store, entry, "node_modules"));

// Prisma's runtime: keep the query compiler the generated client imports.
const generated = join(root, "packages", "db", "generated");
const wanted = new Set();
const readGenerated = (dir) => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) readGenerated(path);
    else if (name.endsWith(".js"))
      for (const match of readFileSync(path, "utf8").matchAll(
        /@prisma\/client\/runtime\/(query_compiler_[\w.-]+?)(?:\.wasm-base64)?\.m?js/g,
      ))
        wanted.add(match[1]);
  }
};
if (existsSync(generated)) readGenerated(generated);
if (wanted.size === 0)
  throw new Error(`no query compiler import found under ${generated}: is the client generated and built?`);
for (const entry of reached) {
  const runtime = join(store, entry, "node_modules", "@prisma", "client", "runtime");
  if (!existsSync(runtime)) continue;
  for (const name of readdirSync(runtime)) {
    const compiler = /^(query_compiler_[\w.-]+?)(?:\.wasm-base64)?\.m?js$/.exec(name)?.[1];
    if ((compiler && !wanted.has(compiler)) || name.endsWith(".map")) {
      freed += sizeOf(join(runtime, name));
      rmSync(join(runtime, name), { force: true });
    }
  }
}

process.stdout.write(
  `prune-production: unlinked ${unlinked.length} optional-peer dev tool links, removed ${removed.length} packages ` +
    `only they reached and unused Prisma query compilers; ${(freed / 1e6).toFixed(1)} MB freed (kept: ${[...wanted].join(", ")})\n`,
);
