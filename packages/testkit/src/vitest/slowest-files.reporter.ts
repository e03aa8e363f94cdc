import type { Reporter, TestModule } from "vitest/node";

/** How many files the summary names. */
const SHOWN = 10;

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Prints the slowest test files at the end of every run, so the next slow one is seen: each
 * file's wall time in its worker (set-up, import, tests and hooks) and how much of it was
 * importing (transform and module load) against running tests and hooks. A file's time includes
 * waiting on the shared services (Postgres, Redis, opencode) under the machine's load.
 */
export default class SlowestFilesReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const rows = modules.map((module) => {
      const d = module.diagnostic();
      const importing = d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration;
      return { file: module.moduleId, total: importing + d.duration, importing, running: d.duration };
    });
    if (rows.length === 0) return;
    rows.sort((a, b) => b.total - a.total);
    const root = process.cwd() + "/";
    const lines = rows
      .slice(0, SHOWN)
      .map(
        (r) =>
          `  ${seconds(r.total).padStart(8)}  (import ${seconds(r.importing)}, tests ${seconds(r.running)})  ${r.file.replace(root, "")}`,
      );
    const sum = rows.reduce((total, r) => total + r.total, 0);
    process.stdout.write(
      `\nSlowest ${Math.min(SHOWN, rows.length)} of ${rows.length} test files (${seconds(sum)} in all files together):\n${lines.join("\n")}\n`,
    );
  }
}
