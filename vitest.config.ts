import { availableParallelism } from "node:os";
import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";
import E2eFirstSequencer from "./packages/testkit/src/vitest/e2e-first.sequencer.ts";

/**
 * Workspace packages export their compiled `dist/` by default and their TypeScript sources under
 * this condition: tests (and every process they spawn, through NODE_OPTIONS) run the sources.
 */
const SOURCE_CONDITION = "ratatoskr-source";
if (!process.env.NODE_OPTIONS?.includes(`--conditions=${SOURCE_CONDITION}`)) {
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ""} --conditions=${SOURCE_CONDITION}`.trim();
}

export default defineConfig({
  resolve: { conditions: [SOURCE_CONDITION, ...defaultServerConditions] },
  ssr: {
    resolve: {
      conditions: [SOURCE_CONDITION, ...defaultServerConditions],
      externalConditions: [SOURCE_CONDITION],
    },
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "services/*/test/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["./packages/testkit/src/vitest/global-setup.ts"],
    pool: "forks",
    // A worker runs its files one after another in one process and keeps the modules it loaded:
    // the suite's imports took ~200 s of CPU when every file loaded them again (~20 s now), on a
    // run bound by two cores. Files stay apart through their own Postgres schema, Redis prefix and
    // processes; a spy on a shared module is restored by the file that made it.
    isolate: false,
    // vitest's default is one fork fewer than the cores: on two cores, one file at a time. Most
    // files wait on processes they started (opencode, services, git) or on timers (the chaos
    // trials' outages), so two more files than cores run side by side: on two cores 415 and 416 s
    // against 455 s with three (CPU 91-93 % busy), and 895 s with two on an earlier machine.
    maxWorkers: Number(process.env.VITEST_MAX_WORKERS ?? availableParallelism() + 2),
    sequence: { sequencer: E2eFirstSequencer },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: [
      "default",
      // A reporter's own outputFile wins over --outputFile.json, so a second run (CI's container
      // step) names its report through the environment instead of overwriting the first.
      ["json", { outputFile: process.env.VITEST_JSON_REPORT ?? ".tmp/vitest-report.json" }],
      // The ten slowest files, after every run.
      "./packages/testkit/src/vitest/slowest-files.reporter.ts",
    ],
  },
});
