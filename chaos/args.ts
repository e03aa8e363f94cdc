export interface ChaosArgs {
  runs: number;
  /** Trial names to run (all when empty). */
  only: string[];
  /** `--help`: print the usage and the trials, run nothing. */
  help: boolean;
}

/** `--runs N` (default 10), `--quick` (1 run each), `--help`, then optional trial names. */
export function parseArgs(argv: readonly string[]): ChaosArgs {
  let runs = 10;
  let help = false;
  const only: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--quick") runs = 1;
    else if (arg === "--help" || arg === "-h") help = true;
    else if (arg === "--runs") {
      runs = Number(argv[++i]);
      if (!Number.isInteger(runs) || runs < 1) throw new Error("--runs needs a whole number ≥ 1");
    } else if (arg.startsWith("--"))
      throw new Error(`unknown option ${arg} (--runs N, --quick, --help, trial names)`);
    else only.push(arg);
  }
  return { runs, only, help };
}

/** What `pnpm chaos --help` prints: the options, then each trial with its fault. */
export function usage(trials: ReadonlyArray<{ name: string; fault: string }>): string {
  const width = Math.max(...trials.map((t) => t.name.length));
  return [
    "pnpm chaos [--runs N | --quick] [trial …]",
    "  --runs N   rounds per trial (default 10)",
    "  --quick    one round per trial",
    "  trial …    run only these trials (default: all)",
    "",
    "trials:",
    ...trials.map((t) => `  ${t.name.padEnd(width)}  ${t.fault}`),
  ].join("\n");
}
