/**
 * `pnpm bench [--smoke] [name …]`: every benchmark in bench/, one child process each (so one
 * bench's clients, heap and timers cannot skew the next), one after the other, then one table of
 * all their rows: measure, ours, floor, ratio, aim, met. Benchmarks are not timed CI tests: the
 * aims are for people; `--smoke` runs tiny counts without thresholds to prove nothing rotted,
 * several benches at once (`--jobs N`, default 3; their output is printed as each ends) since
 * nothing is measured then. A full run is one bench at a time. Exit 2 when a full run misses an aim.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { formatTable, loadLine, ROWS_FILE_ENV, type BenchRow } from "./lib/bench-harness.ts";

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const TSX = join(BENCH_DIR, "..", "node_modules", ".bin", "tsx");

function benchFiles(only: string[]): string[] {
  return readdirSync(BENCH_DIR)
    .filter((f) => f.endsWith(".ts") && f !== "run-all.ts")
    .filter((f) => only.length === 0 || only.includes(basename(f, ".ts")))
    .sort();
}

/** Runs one bench file; `buffered` holds its output back and prints it in one piece when it ends. */
function runOne(file: string, smoke: boolean, rowsFile: string, buffered: boolean): Promise<number> {
  const args = ["--conditions=ratatoskr-source", join(BENCH_DIR, file), ...(smoke ? ["--smoke"] : [])];
  const started = performance.now();
  const title = `\n==> ${file}${smoke ? " (smoke)" : ""}`;
  if (!buffered) console.log(title);
  const child = spawn(TSX, args, {
    stdio: buffered ? ["ignore", "pipe", "pipe"] : "inherit",
    env: { ...process.env, [ROWS_FILE_ENV]: rowsFile },
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) =>
    child.on("close", (code) => {
      const took = `(${file}: ${((performance.now() - started) / 1000).toFixed(1)} s)`;
      console.log(buffered ? `${title}\n${output.trimEnd()}\n${took}` : took);
      resolve(code ?? 1);
    }),
  );
}

/** Runs `work` over `items`, at most `limit` at a time, results in the items' order. */
async function pooled<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await work(items[i] as T);
      }
    }),
  );
  return results;
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
  const jobsArg = argv.find((a) => a.startsWith("--jobs="));
  const parallel = smoke ? Math.max(1, Number(jobsArg?.slice("--jobs=".length) ?? 3)) : 1;
  try {
    const codes = await pooled(files, parallel, (file) =>
      runOne(file, smoke, join(dir, `${basename(file, ".ts")}.jsonl`), parallel > 1),
    );
    files.forEach((file, i) => {
      const code = codes[i] as number;
      const own = readRows(join(dir, `${basename(file, ".ts")}.jsonl`));
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
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\n${formatTable(rows)}\n${loadLine()}`);
  if (failed.length > 0) {
    console.error(`\nfailed: ${failed.join(", ")}`);
    process.exitCode = 1;
  } else if (!smoke && rows.some((r) => r.met === false)) process.exitCode = 2;
}

void main();
