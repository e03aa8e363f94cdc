import { SERVICES, type ServiceName } from "./world.ts";

/** One trial's totals over its rounds. */
export interface TrialRow {
  trial: string;
  fault: string;
  runs: number;
  messages: number;
  lost: number;
  duplicated: number;
  stuck: number;
  /** Worst time from the end of the fault to the last first answer of a round, ms. */
  recoveryMs: number | undefined;
  /** Warning/error log lines, per service the trial's world ran, over the whole trial. */
  warnLines: Partial<Record<ServiceName, number>>;
  /** A round that could not be run (the harness, not the services, failed). */
  error?: string;
}

const seconds = (ms: number | undefined) => (ms === undefined ? "—" : `${(ms / 1000).toFixed(1)} s`);

/** The table `pnpm chaos` prints (GitHub markdown, readable as plain text too). */
export function formatTable(rows: readonly TrialRow[]): string {
  const header = ["trial", "fault", "runs", "messages", "lost", "duplicated", "stuck", "recovery", "warn lines i/a/n/d/r/p"];
  const lines = rows.map((r) => [
    r.trial,
    r.fault,
    String(r.runs),
    String(r.messages),
    String(r.lost),
    String(r.duplicated),
    String(r.stuck),
    seconds(r.recoveryMs),
    SERVICES.map((service) => r.warnLines[service] ?? "-").join("/"),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const row = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [row(header), row(widths.map((w) => "-".repeat(w))), ...lines.map(row)].join("\n");
}

/** A trial passes with nothing lost, duplicated or stuck, and every round run. */
export const passed = (row: TrialRow) =>
  row.error === undefined && row.lost === 0 && row.duplicated === 0 && row.stuck === 0;
