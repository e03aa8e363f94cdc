/**
 * What every benchmark in bench/ shares: interleaved repeated runs against a floor measured in the
 * same process, medians, one row per measure, and a table. A bench file exports `run` and calls
 * `benchMain` so it also runs alone (`pnpm tsx bench/<name>.ts [--smoke]`).
 */
import { cpus, loadavg } from "node:os";
import { appendFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

export interface BenchOptions {
  /** Tiny counts, no thresholds: proves the bench still runs (CI). */
  smoke: boolean;
}

export interface BenchRow {
  measure: string;
  ours: number;
  floor: number | null;
  unit: string;
  /** The aim in words, e.g. "≥ 0.8× floor". */
  aim: string;
  /** null when the row has no threshold (or in smoke mode). */
  met: boolean | null;
  note?: string;
}

export type Bench = (options: BenchOptions) => Promise<BenchRow[]>;

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

/**
 * Runs each variant `rounds` times, alternating (A B A B …, starting side swapped every round so
 * neither always runs warm), and returns each variant's per-round results.
 */
export async function interleave<K extends string>(
  rounds: number,
  variants: Record<K, () => Promise<number>>,
): Promise<Record<K, number[]>> {
  const keys = Object.keys(variants) as K[];
  const results = Object.fromEntries(keys.map((k) => [k, [] as number[]])) as Record<K, number[]>;
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? keys : [...keys].reverse();
    for (const key of order) results[key].push(await variants[key]());
  }
  return results;
}

/** Runs `count` operations with `concurrency` in flight; returns operations per second. */
export async function throughput(
  count: number,
  concurrency: number,
  op: (i: number, lane: number) => Promise<void>,
) {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, lane) => {
      while (next < count) await op(next++, lane);
    }),
  );
  return (count * 1000) / (performance.now() - started);
}

/** A row comparing ours with a floor by ratio (ours / floor); `minRatio` or `maxRatio` is the aim. */
export function ratioRow(
  options: BenchOptions,
  row: {
    measure: string;
    ours: number;
    floor: number;
    unit: string;
    minRatio?: number;
    maxRatio?: number;
    note?: string;
  },
): BenchRow {
  const ratio = row.ours / row.floor;
  const aim =
    row.minRatio !== undefined
      ? `≥ ${row.minRatio}× floor`
      : row.maxRatio !== undefined
        ? `≤ ${row.maxRatio}× floor`
        : "—";
  let met: boolean | null = null;
  if (!options.smoke && row.minRatio !== undefined) met = ratio >= row.minRatio;
  if (!options.smoke && row.maxRatio !== undefined) met = ratio <= row.maxRatio;
  return {
    measure: row.measure,
    ours: row.ours,
    floor: row.floor,
    unit: row.unit,
    aim,
    met,
    ...(row.note ? { note: row.note } : {}),
  };
}

const fmt = (n: number | null) =>
  n === null || Number.isNaN(n)
    ? "—"
    : Math.abs(n) >= 100
      ? Math.round(n).toLocaleString("en")
      : n.toFixed(2);

/** The one table: measure, ours, floor, ratio, aim, met (notes below it). */
export function formatTable(rows: BenchRow[]): string {
  const header = ["measure", "ours", "floor", "ratio", "aim", "met"];
  const body = rows.map((r) => [
    r.measure,
    `${fmt(r.ours)} ${r.unit}`,
    r.floor === null ? "—" : `${fmt(r.floor)} ${r.unit}`,
    r.floor === null ? "—" : `${(r.ours / r.floor).toFixed(2)}×`,
    r.aim,
    r.met === null ? "—" : r.met ? "yes" : "NO",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] as string).length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(" | ")} |`;
  const notes = rows.filter((r) => r.note).map((r) => `- ${r.measure}: ${r.note}`);
  return [
    line(header),
    line(widths.map((w) => "-".repeat(w))),
    ...body.map(line),
    ...(notes.length ? ["", ...notes] : []),
  ].join("\n");
}

/** The machine's load when a bench ends: every figure above depends on it. */
export function loadLine(): string {
  const [one, five] = loadavg();
  return `load average ${one!.toFixed(2)} (1 min), ${five!.toFixed(2)} (5 min) on ${cpus().length} cores`;
}

/** Where the runner collects rows from child processes (one JSON line per row). */
export const ROWS_FILE_ENV = "BENCH_ROWS_FILE";

/** Entry point of a bench file: runs it when executed directly, prints its table, hands rows to the runner. */
export function benchMain(moduleUrl: string, bench: Bench): void {
  const script = process.argv[1];
  if (!script || pathToFileURL(script).href !== moduleUrl) return;
  const options = { smoke: process.argv.includes("--smoke") };
  bench(options).then(
    (rows) => {
      console.log(formatTable(rows));
      console.log(loadLine());
      const file = process.env[ROWS_FILE_ENV];
      if (file) for (const row of rows) appendFileSync(file, `${JSON.stringify(row)}\n`);
      if (!options.smoke && rows.some((r) => r.met === false)) process.exitCode = 2;
      // Clients some libraries keep open must not hold the process.
      setTimeout(() => process.exit(), 100).unref();
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
