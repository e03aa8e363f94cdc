import type { FollowUp } from "@ratatoskr/db";

/**
 * Hands accepted commands' follow-ups to the queues together and after the answers: those
 * accepted in one turn of the event loop (a group-commit batch resolves all its callers at once)
 * are dispatched by one call, once the event loop has written the responses (setImmediate). The
 * rows are durable already; a dispatch that fails is left to the outbox reconciler.
 */
export function coalescedDispatch(
  dispatch: (followUps: FollowUp[]) => Promise<unknown>,
  onError: (err: unknown, followUps: readonly FollowUp[]) => void,
): (followUps: readonly FollowUp[]) => void {
  let gathered: FollowUp[] = [];
  return (followUps) => {
    if (followUps.length === 0) return;
    if (gathered.length === 0)
      setImmediate(() => {
        const batch = gathered;
        gathered = [];
        dispatch(batch).catch((err: unknown) => onError(err, batch));
      });
    gathered.push(...followUps);
  };
}
