import type { FollowUp } from "@ratatoskr/db";

/**
 * Hands accepted commands' follow-ups to the queues together and after the answers: those
 * accepted in one turn of the event loop (a group-commit batch resolves all its callers at once)
 * are dispatched by one call, once the event loop has written the responses (setImmediate), and
 * those accepted while a dispatch is under way wait for it and go together in the next one. At a
 * steady rate one command rarely shares a turn with another, so without the wait nearly every
 * command cost its own Redis round trips and its own dispatched-mark UPDATE beside the webhook.
 * The rows are durable already; a dispatch that fails is left to the outbox reconciler.
 */
export function coalescedDispatch(
  dispatch: (followUps: FollowUp[]) => Promise<unknown>,
  onError: (err: unknown, followUps: readonly FollowUp[]) => void,
): (followUps: readonly FollowUp[]) => void {
  let gathered: FollowUp[] = [];
  let inFlight = false;

  function send(): void {
    const batch = gathered;
    gathered = [];
    inFlight = true;
    dispatch(batch)
      .catch((err: unknown) => onError(err, batch))
      .finally(() => {
        inFlight = false;
        if (gathered.length > 0) send();
      });
  }

  return (followUps) => {
    if (followUps.length === 0) return;
    if (gathered.length === 0 && !inFlight) setImmediate(send);
    gathered.push(...followUps);
  };
}
