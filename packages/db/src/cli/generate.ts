// `pnpm db:generate`: the Prisma 7 client into packages/db/generated, offline.
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { REPO_ROOT } from "../paths.ts";
import { offlinePrismaEnv } from "../prisma-cli/dummy-engine.ts";

const prismaCli = createRequire(join(REPO_ROOT, "package.json")).resolve("prisma/build/index.js");
try {
  execFileSync(process.execPath, [prismaCli, "generate"], {
    cwd: REPO_ROOT,
    env: offlinePrismaEnv(),
    stdio: "inherit",
  });
} catch {
  process.exitCode = 1;
}
