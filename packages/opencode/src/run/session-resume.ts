import type { OpencodeApi } from "../api/opencode-api.ts";
import { OpencodeHttpError } from "../errors/opencode-http.error.ts";
import type { ActivePoller } from "./active-poller.ts";
import { interruptWithin } from "./interrupt.ts";

/** How long a resumed session's leftover turn may take to stop after the interrupt. */
const SETTLE_AFTER_INTERRUPT_MS = 5_000;

export interface ResumeDeps {
  api: OpencodeApi;
  activePoller: ActivePoller;
  now: () => number;
}

/**
 * Prepares an existing session for a new prompt. Returns false when the server no longer holds
 * it (the caller starts a new one). A turn it is still running (a previous attempt of a retried
 * job) is interrupted and awaited, so the new prompt never races an old turn.
 */
export async function prepareResume(
  deps: ResumeDeps,
  sessionId: string,
  signal: AbortSignal | undefined,
  warn: (message: string) => void,
): Promise<boolean> {
  try {
    await deps.api.session(sessionId, signal);
  } catch (err) {
    if (err instanceof OpencodeHttpError && err.status === 404) {
      warn(`session ${sessionId} no longer exists on ${deps.api.http.baseUrl}; starting a new session`);
      return false;
    }
    throw err;
  }
  if (!(await deps.activePoller.snapshotAfter(deps.now(), signal)).ids.has(sessionId)) return true;
  warn(`session ${sessionId} is still running a turn (an earlier attempt?); interrupting it before the new prompt`);
  const interrupted = await interruptWithin(deps.api, sessionId);
  if (!interrupted.ok) throw new Error(`could not interrupt the running turn of session ${sessionId}: ${interrupted.error.message}`);
  const until = deps.now() + SETTLE_AFTER_INTERRUPT_MS;
  while (deps.now() < until) {
    if (!(await deps.activePoller.snapshotAfter(deps.now(), signal)).ids.has(sessionId)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`session ${sessionId} still runs a turn ${SETTLE_AFTER_INTERRUPT_MS} ms after the interrupt`);
}
