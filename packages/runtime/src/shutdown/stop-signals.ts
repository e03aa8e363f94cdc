/**
 * Stop signals for the entries, with nothing imported: an entry takes them over first thing,
 * before it loads the rest (a Ctrl-C while modules load would otherwise kill the process with
 * Node's default, exit 130, leaving whatever it had started).
 */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/**
 * Signals this soon after the first are the same keypress: under `pnpm start` the terminal's
 * Ctrl-C reaches pnpm and node, and pnpm forwards its own copy to node.
 */
export const SAME_KEYPRESS_MS = 1_000;

/** What takes signals: `process`, or a buffer of them (tests drive it by hand). */
export interface SignalSource {
  once(signal: NodeJS.Signals, listener: () => void): unknown;
  on(signal: NodeJS.Signals, listener: () => void): unknown;
}

/**
 * Holds stop signals that arrive before anyone listens, and hands each to the first listener
 * of its kind (at once if it came already): installed first thing, it makes a Ctrl-C during
 * start-up a stop like any other.
 */
export function bufferStopSignals(target: Pick<SignalSource, "on"> = process): SignalSource {
  const early = new Set<NodeJS.Signals>();
  const listeners = new Map<NodeJS.Signals, Array<{ listener: () => void; once: boolean }>>();
  for (const signal of STOP_SIGNALS) {
    target.on(signal, () => {
      const waiting = listeners.get(signal) ?? [];
      if (waiting.length === 0) return void early.add(signal);
      listeners.set(signal, waiting.filter((w) => !w.once));
      for (const { listener } of waiting) listener();
    });
  }
  const add = (signal: NodeJS.Signals, listener: () => void, once: boolean) => {
    if (early.delete(signal)) {
      queueMicrotask(listener);
      if (once) return;
    }
    listeners.set(signal, [...(listeners.get(signal) ?? []), { listener, once }]);
  };
  return {
    on: (signal, listener) => add(signal, listener, false),
    once: (signal, listener) => add(signal, listener, true),
  };
}

export interface StopHandlers {
  /** The first stop signal: stop gracefully. */
  stop(signal: StopSignal): void;
  /** A second one, a moment after the first: the person insists; exit now. */
  force(signal: StopSignal): void;
  now?: () => number;
}

/** One keypress is one stop: the first stop signal stops, copies within SAME_KEYPRESS_MS are ignored, a later one forces. */
export function onStopSignals(source: Pick<SignalSource, "on">, handlers: StopHandlers): void {
  const now = handlers.now ?? Date.now;
  let firstAt: number | undefined;
  for (const signal of STOP_SIGNALS) {
    source.on(signal, () => {
      if (firstAt === undefined) {
        firstAt = now();
        handlers.stop(signal);
      } else if (now() - firstAt > SAME_KEYPRESS_MS) handlers.force(signal);
    });
  }
}
