import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** Path of the real `opencode` executable shipped by the `opencode-ai` npm package. */
export function resolveOpencodeBinary(): string {
  const require = createRequire(import.meta.url);
  const pkgPath = require.resolve("opencode-ai/package.json");
  const pkg = JSON.parse(readFileSync(pkgPath, "utf8")) as { bin?: string | Record<string, string> };
  const bin = typeof pkg.bin === "string" ? pkg.bin : pkg.bin?.["opencode"];
  if (!bin) throw new Error(`opencode-ai at ${pkgPath} declares no "opencode" bin`);
  return join(dirname(pkgPath), bin);
}
