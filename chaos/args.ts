export interface ChaosArgs {
  runs: number;
  /** Trial names to run (all when empty). */
  only: string[];
}

/** `--runs N` (default 10), `--quick` (1 run each), then optional trial names. */
export function parseArgs(argv: readonly string[]): ChaosArgs {
  let runs = 10;
  const only: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--quick") runs = 1;
    else if (arg === "--runs") {
      runs = Number(argv[++i]);
      if (!Number.isInteger(runs) || runs < 1) throw new Error("--runs needs a whole number ≥ 1");
    } else if (arg.startsWith("--")) throw new Error(`unknown option ${arg} (--runs N, --quick, trial names)`);
    else only.push(arg);
  }
  return { runs, only };
}
