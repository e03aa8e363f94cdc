import type { Logger } from "pino";
import { withTimeout } from "../util/with-timeout.ts";

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

/** Minimal process surface, so tests can drive signals without killing the test runner. */
export interface SignalSource {
  once(signal: NodeJS.Signals, listener: () => void): unknown;
  on(signal: NodeJS.Signals, listener: () => void): unknown;
}

export interface ShutdownRegistryOptions {
  logger: Logger;
  /** Bound for each closer unless it registers its own (default 10_000 ms). */
  closerTimeoutMs?: number;
  /** Called after a signal-triggered shutdown; defaults to process.exit. */
  exit?: (code: number) => void;
  signals?: SignalSource;
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

  constructor(opts: ShutdownRegistryOptions) {
    this.logger = opts.logger.child({ component: "shutdown" });
    this.closerTimeoutMs = opts.closerTimeoutMs ?? DEFAULT_CLOSER_TIMEOUT_MS;
    this.exit = opts.exit ?? ((code) => process.exit(code));
    this.signals = opts.signals ?? process;
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
   * Installs SIGTERM/SIGINT/SIGHUP handlers once (SIGHUP: the terminal closed); a second signal
   * while stopping forces exit 1.
   */
  installSignalHandlers(signals: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT", "SIGHUP"]): void {
    if (this.signalsInstalled) return;
    this.signalsInstalled = true;
    for (const signal of signals) {
      this.signals.on(signal, () => {
        if (this.running) {
          this.logger.warn({ signal }, "second signal while shutting down; exiting now");
          this.exit(1);
          return;
        }
        void this.shutdown(signal).then((result) => this.exit(result.clean ? 0 : 1));
      });
    }
  }

  /** Runs every closer once, phase by phase. Idempotent: later calls get the same result. */
  shutdown(reason: string): Promise<ShutdownResult> {
    this.running ??= this.run(reason);
    return this.running;
  }

  private async run(reason: string): Promise<ShutdownResult> {
    this.logger.info({ reason }, "shutting down");
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
            this.logger.error({ err, phase, closer: closer.name }, "closer failed");
          }
        }),
      );
    }
    this.logger.info({ clean: failed.length === 0, failed }, "shutdown finished");
    return { clean: failed.length === 0, failed };
  }
}
