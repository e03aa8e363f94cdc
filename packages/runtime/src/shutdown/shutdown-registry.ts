import type { Logger } from "pino";
import { withTimeout } from "../util/with-timeout.ts";
import { onStopSignals, type SignalSource } from "./stop-signals.ts";

/**
 * Shutdown runs phase by phase; closers within a phase run concurrently (six workers in the
 * all-in-one process share one grace period instead of waiting 6 × 30 s).
 *  1. intake      — HTTP servers, the Telegram bot: no new work comes in
 *  2. workers     — running jobs finish or are handed back (closer must bound itself)
 *  3. queues      — producers' Queue objects
 *  4. database    — Prisma
 *  5. connections — Redis connections: everything above still needs them
 *  6. telemetry   — the health/metrics server of a worker-only service, so probes and scrapes
 *                   keep answering (readiness: 503 draining) while jobs drain
 */
export const SHUTDOWN_PHASES = [
  "intake",
  "workers",
  "queues",
  "database",
  "connections",
  "telemetry",
] as const;
export type ShutdownPhase = (typeof SHUTDOWN_PHASES)[number];

export interface ShutdownResult {
  readonly clean: boolean;
  /** Names of closers that threw or timed out. */
  readonly failed: readonly string[];
}

interface Closer {
  readonly phase: ShutdownPhase;
  readonly name: string;
  readonly close: () => Promise<unknown>;
  readonly timeoutMs: number;
}

export type { SignalSource } from "./stop-signals.ts";

export interface ShutdownRegistryOptions {
  logger: Logger;
  /** Bound for each closer unless it registers its own (default 10_000 ms). */
  closerTimeoutMs?: number;
  /** Called after a signal-triggered shutdown; defaults to process.exit. */
  exit?: (code: number) => void;
  signals?: SignalSource;
  /** Clock for telling one keypress from two (tests). */
  now?: () => number;
}

const DEFAULT_CLOSER_TIMEOUT_MS = 10_000;

/** One per process: everything that must be stopped on SIGTERM registers here. */
export class ShutdownRegistry {
  private readonly closers: Closer[] = [];
  private running: Promise<ShutdownResult> | undefined;
  private signalsInstalled = false;
  private readonly logger: Logger;
  private readonly closerTimeoutMs: number;
  private readonly exit: (code: number) => void;
  private readonly signals: SignalSource;
  private readonly now: () => number;

  constructor(opts: ShutdownRegistryOptions) {
    this.logger = opts.logger.child({ component: "shutdown" });
    this.closerTimeoutMs = opts.closerTimeoutMs ?? DEFAULT_CLOSER_TIMEOUT_MS;
    this.exit = opts.exit ?? ((code) => process.exit(code));
    this.signals = opts.signals ?? process;
    this.now = opts.now ?? Date.now;
  }

  get isShuttingDown(): boolean {
    return this.running !== undefined;
  }

  register(
    phase: ShutdownPhase,
    name: string,
    close: () => Promise<unknown>,
    opts: { timeoutMs?: number } = {},
  ): void {
    if (this.running) throw new Error(`cannot register "${name}": shutdown already started`);
    this.closers.push({ phase, name, close, timeoutMs: opts.timeoutMs ?? this.closerTimeoutMs });
  }

  /**
   * Installs SIGTERM/SIGINT/SIGHUP handlers once (SIGHUP: the terminal closed). One keypress is
   * one stop: copies of the signal within a second (pnpm forwards its own) are the same one; a
   * signal after that while stopping forces exit 1.
   */
  installSignalHandlers(): void {
    if (this.signalsInstalled) return;
    this.signalsInstalled = true;
    onStopSignals(this.signals, {
      stop: (signal) => void this.shutdown(signal).then((result) => this.exit(result.clean ? 0 : 1)),
      force: (signal) => {
        this.logger.warn({ signal }, "second signal while shutting down; exiting now");
        this.exit(1);
      },
      now: this.now,
    });
  }

  /**
   * Runs every closer once, phase by phase. Idempotent: later calls get the same result.
   * `quiet`: only at debug level (a failed start-up, whose cause the entry prints in one line).
   */
  shutdown(reason: string, options: { quiet?: boolean } = {}): Promise<ShutdownResult> {
    this.running ??= this.run(reason, options.quiet === true);
    return this.running;
  }

  private async run(reason: string, quiet: boolean): Promise<ShutdownResult> {
    const log = quiet ? this.logger.debug.bind(this.logger) : undefined;
    const info = log ?? this.logger.info.bind(this.logger);
    const error = log ?? this.logger.error.bind(this.logger);
    info({ reason }, "shutting down");
    const failed: string[] = [];
    for (const phase of SHUTDOWN_PHASES) {
      const closers = this.closers.filter((c) => c.phase === phase);
      await Promise.all(
        closers.map(async (closer) => {
          try {
            await withTimeout(
              Promise.resolve().then(closer.close),
              closer.timeoutMs,
              `closing ${closer.name}`,
            );
            this.logger.debug({ phase, closer: closer.name }, "closed");
          } catch (err) {
            failed.push(closer.name);
            error({ err, phase, closer: closer.name }, "closer failed");
          }
        }),
      );
    }
    info({ clean: failed.length === 0, failed }, "shutdown finished");
    return { clean: failed.length === 0, failed };
  }
}
