/**
 * `pnpm bench [--smoke] [name …]`: every benchmark in bench/, one child process each (so one
 * bench's clients, heap and timers cannot skew the next), one after the other, then one table of
 * all their rows: measure, ours, floor, ratio, aim, met. Benchmarks are not timed CI tests: the
 * aims are for people; `--smoke` runs tiny counts without thresholds to prove nothing rotted.
 * Exit 2 when a full run misses an aim.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { formatTable, ROWS_FILE_ENV, type BenchRow } from "./lib/bench-harness.ts";

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const TSX = join(BENCH_DIR, "..", "node_modules", ".bin", "tsx");

function benchFiles(only: string[]): string[] {
  return readdirSync(BENCH_DIR)
    .filter((f) => f.endsWith(".ts") && f !== "run-all.ts")
    .filter((f) => only.length === 0 || only.includes(basename(f, ".ts")))
    .sort();
}

function runOne(file: string, smoke: boolean, rowsFile: string): Promise<number> {
  const args = ["--conditions=ratatoskr-source", join(BENCH_DIR, file), ...(smoke ? ["--smoke"] : [])];
  const child = spawn(TSX, args, { stdio: "inherit", env: { ...process.env, [ROWS_FILE_ENV]: rowsFile } });
  return new Promise((resolve) => child.on("exit", (code) => resolve(code ?? 1)));
}

function readRows(rowsFile: string): BenchRow[] {
  let text = "";
  try {
    text = readFileSync(rowsFile, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as BenchRow);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const smoke = argv.includes("--smoke");
  const files = benchFiles(argv.filter((a) => !a.startsWith("--")));
  const dir = mkdtempSync(join(tmpdir(), "ratatoskr-bench-"));
  const rows: BenchRow[] = [];
  const failed: string[] = [];
  try {
    for (const file of files) {
      console.log(`\n==> ${file}${smoke ? " (smoke)" : ""}`);
      const rowsFile = join(dir, `${basename(file, ".ts")}.jsonl`);
      const code = await runOne(file, smoke, rowsFile);
      const own = readRows(rowsFile);
      // exit 2 = ran, an aim missed (its rows say which); anything else without rows is a crash.
      if (code !== 0 && code !== 2) failed.push(`${file} exited ${code}`);
      if (own.length === 0)
        rows.push({
          measure: basename(file, ".ts"),
          ours: NaN,
          floor: null,
          unit: "",
          aim: "—",
          met: null,
          note: code === 0 ? "reports in its own format (above)" : `exited ${code} without rows`,
        });
      rows.push(...own);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\n${formatTable(rows)}`);
  if (failed.length > 0) {
    console.error(`\nfailed: ${failed.join(", ")}`);
    process.exitCode = 1;
  } else if (!smoke && rows.some((r) => r.met === false)) process.exitCode = 2;
}

void main();
