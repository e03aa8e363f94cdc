import type { OpencodeApi } from "../api/opencode-api.ts";

/** An interrupt must never hold a timeout or a cancel up for long (a frozen server answers nothing). */
export const INTERRUPT_CAP_MS = 2_000;

export type InterruptResult = { ok: true } | { ok: false; error: Error };

/** Asks the server to stop the session's turn, giving up after `capMs`. Never throws. */
export async function interruptWithin(api: OpencodeApi, sessionId: string, capMs = INTERRUPT_CAP_MS): Promise<InterruptResult> {
  const cap = AbortSignal.timeout(capMs);
  try {
    await api.interrupt(sessionId, cap);
    return { ok: true };
  } catch (err) {
    if (cap.aborted) return { ok: false, error: new Error(`opencode did not answer the interrupt within ${capMs} ms`) };
    return { ok: false, error: err instanceof Error ? err : new Error(String(err)) };
  }
}

/** "session X interrupted" or why it may still run, for timeout and cancel messages. */
export function describeInterrupt(sessionId: string, result: InterruptResult): string {
  return result.ok ? `session ${sessionId} interrupted` : `could not interrupt session ${sessionId} (${result.error.message}); it may still be running`;
}
