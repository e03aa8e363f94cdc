/**
 * Each service's compiled entry (`services/<name>/dist/main.js`, tsc's output) bundled with its
 * dependencies. A start then reads a few dozen files instead of ~1,000 modules: 0.53-0.61 s of
 * CPU instead of 1.14-1.29 s, which every replica, restart and e2e test pays.
 * Dynamic imports stay lazy (their own chunks), so what an idle process does not load stays out.
 *
 * A module that finds files or packages from where it lives (`import.meta.url`, `__dirname`,
 * `__filename`, `require.resolve`: the migrations, `createRequire` of an optional package, Bull
 * Board's UI files) is told the place it was bundled from, relative to the bundle, so it finds the
 * same things in a checkout and in the image.
 * The test kit stays outside: the production image leaves it out, and the demo's import of it
 * fails there as it did before bundling.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, cpSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";

const esbuild = () => import(createRequire(import.meta.url).resolve("esbuild"));

/** Top of every output file: `require` for what esbuild leaves to run time, and the helpers below. */
const BANNER = [
  'import { createRequire as __ratatoskrCreateRequire } from "node:module";',
  'import { fileURLToPath as __ratatoskrFileURLToPath } from "node:url";',
  "const require = __ratatoskrCreateRequire(import.meta.url);",
  "const __ratatoskrOrigin = (path) => new URL(path, import.meta.url);",
].join("\n");

const USES_LOCATION = /import\.meta\.url|__dirname|__filename|require\.resolve\(/;
/** `require.resolve(` that esbuild leaves to run time (a package finding another's files). */
const REQUIRE_RESOLVE = /(?<![\w$.])require\.resolve\(/g;

/** A module that reads `name` without declaring it (CommonJS's own variables). */
function needs(source, name) {
  return (
    new RegExp(`\\b${name}\\b`).test(source) &&
    !new RegExp(`\\b(?:var|let|const|function)\\s+${name}\\b`).test(source)
  );
}

/** Tells each bundled module where it was bundled from (see the module comment). */
function originPlugin(outdir) {
  return {
    name: "ratatoskr-module-origin",
    setup(build) {
      build.onLoad({ filter: /\.[cm]?js$/ }, (args) => {
        const source = readFileSync(args.path, "utf8");
        if (!USES_LOCATION.test(source)) return undefined;
        const from = JSON.stringify(relative(outdir, args.path).split(sep).join("/"));
        const dir = JSON.stringify(`${relative(outdir, join(args.path, "..")).split(sep).join("/") || "."}/`);
        const locals = [
          needs(source, "__filename") && `__filename = __ratatoskrFileURLToPath(__ratatoskrOrigin(${from}))`,
          needs(source, "__dirname") &&
            `__dirname = __ratatoskrFileURLToPath(__ratatoskrOrigin(${dir})).replace(/\\/$/, "")`,
        ].filter(Boolean);
        const contents =
          (locals.length ? `var ${locals.join(", ")};\n` : "") +
          source
            .replaceAll("import.meta.url", `__ratatoskrOrigin(${from}).href`)
            .replace(REQUIRE_RESOLVE, `__ratatoskrCreateRequire(__ratatoskrOrigin(${from})).resolve(`);
        return { contents, loader: "js" };
      });
    },
  };
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const requireForKeys = createRequire(import.meta.url);

/**
 * `await import("cjs-package")` gives Node's named exports (`const { A } = await import(…)`); a
 * split bundle's chunk of a CommonJS package exports only `default`. Such an import is given a
 * module of its own that re-exports the package's keys by name, as Node does.
 */
function commonJsDynamicImportPlugin() {
  return {
    name: "ratatoskr-cjs-dynamic-import",
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (
          args.kind !== "dynamic-import" ||
          args.pluginData === "resolving" ||
          args.path.startsWith("node:")
        )
          return undefined;
        const resolved = await build.resolve(args.path, {
          kind: args.kind,
          resolveDir: args.resolveDir,
          importer: args.importer,
          pluginData: "resolving",
        });
        if (resolved.errors.length > 0 || resolved.external || !isCommonJs(resolved.path)) return undefined;
        return { path: resolved.path, namespace: "cjs-dynamic-import" };
      });
      build.onLoad({ filter: /.*/, namespace: "cjs-dynamic-import" }, (args) => {
        const names = Object.keys(requireForKeys(args.path)).filter(
          (key) => IDENTIFIER.test(key) && key !== "default",
        );
        const path = JSON.stringify(args.path);
        return {
          contents: `const m = require(${path});\nexport default m;\nexport const { ${names.join(", ")} } = m;\n`,
          resolveDir: join(args.path, ".."),
          loader: "js",
        };
      });
    },
  };
}

function isCommonJs(path) {
  if (path.endsWith(".cjs")) return true;
  if (path.endsWith(".mjs")) return false;
  return !/^\s*(?:import|export)\b/m.test(readFileSync(path, "utf8"));
}

/**
 * Packages left out of the bundle and loaded from their own files: `pg`, which `pg-driver.ts`
 * loads itself (see there) and Prisma's adapter imports. A second, bundled copy would not know the
 * first's pools (`instanceof`), and the adapter would take our pool for its options.
 */
const LOADED_IN_PLACE = ["pg"];

function loadedInPlacePlugin(outdir) {
  const names = new RegExp(`^(?:${LOADED_IN_PLACE.join("|")})$`);
  return {
    name: "ratatoskr-loaded-in-place",
    setup(build) {
      build.onResolve({ filter: names }, async (args) => {
        if (args.pluginData === "resolving") return undefined;
        const resolved = await build.resolve(args.path, {
          kind: args.kind,
          resolveDir: args.resolveDir,
          importer: args.importer,
          pluginData: "resolving",
        });
        if (resolved.errors.length > 0) return undefined;
        return { path: `./${relative(outdir, resolved.path).split(sep).join("/")}`, external: true };
      });
    },
  };
}

/** Where the chunks the services share are written: the all-in-one holds every service anyway. */
const CHUNKS = "all-in-one/dist";

/**
 * Bundles every service's `dist/main.js` in one build and puts the bundles in place of tsc's
 * service output: each service's `dist/main.js` is its entry, and the code two services share is
 * written once, into chunks in the all-in-one's `dist` (every entry and chunk sits at the same
 * depth, `services/<name>/dist/`, so one relative path reaches a module's origin from any of them).
 */
export async function bundleServices(root) {
  const { build } = await esbuild();
  const services = readdirSync(join(root, "services")).filter((name) =>
    existsSync(join(root, "services", name, "dist", "main.js")),
  );
  const depth = join(root, "services", CHUNKS);
  const staging = mkdtempSync(join(tmpdir(), "ratatoskr-bundle-"));
  try {
    await build({
      entryPoints: Object.fromEntries(
        services.map((name) => [`${name}/dist/main`, join(root, "services", name, "dist", "main.js")]),
      ),
      outdir: staging,
      chunkNames: `${CHUNKS}/[name]-[hash]`,
      bundle: true,
      splitting: true,
      format: "esm",
      platform: "node",
      target: "node20",
      external: ["@ratatoskr/testkit"],
      banner: { js: BANNER },
      plugins: [loadedInPlacePlugin(depth), commonJsDynamicImportPlugin(), originPlugin(depth)],
      logLevel: "error",
    });
    for (const name of services) {
      const dist = join(root, "services", name, "dist");
      rmSync(dist, { recursive: true, force: true });
      cpSync(join(staging, name, "dist"), dist, { recursive: true });
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
