import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));

/**
 * Where the services a test spawns run from: `dist` (the tsc build, as `pnpm start` and the image
 * run them) or `source` (tsx). The test run's global set-up builds once and sets `dist`; anything
 * else (the chaos runner, a bench, a test file run without the set-up) gets `source`.
 */
export const SERVICES_FROM_VAR = "RATATOSKR_TEST_SERVICES_FROM";

/** `node <args>` that runs `services/<name>`'s entry, from the build when the run has one. */
export function serviceEntryArgs(name: string, env: NodeJS.ProcessEnv = process.env): string[] {
  return env[SERVICES_FROM_VAR] === "dist"
    ? [`services/${name}/dist/main.js`]
    : ["--conditions=ratatoskr-source", "--import", "tsx", `services/${name}/src/main.ts`];
}

export { REPO_ROOT as SERVICES_CWD };

/**
 * Builds the services when the sources changed since the last build (`scripts/build.mjs
 * --if-stale`). Under tsx a service start costs about 1.8 s of CPU, from the build's bundle
 * 0.55-0.6 s (1.1-1.3 s from tsc's output unbundled), and the e2e files start a few hundred of
 * them. Fails with tsc's output when the build fails.
 */
export async function buildServicesIfStale(): Promise<void> {
  try {
    await promisify(execFile)(process.execPath, ["scripts/build.mjs", "--if-stale"], {
      cwd: REPO_ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
    throw new Error(
      `The services the e2e tests spawn could not be built (scripts/build.mjs --if-stale); ` +
        `fix the errors below, or run them from source with ${SERVICES_FROM_VAR}=source.\n${stdout}${stderr}`,
    );
  }
}
