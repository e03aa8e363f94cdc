/**
 * opencode stopped the turn without finishing it: the session is idle but its newest message never
 * got a finish, a completion time or an error (e.g. a rejected question stops the turn this way).
 */
export class HaltedTurnError extends Error {
  override readonly name = "HaltedTurnError";
  constructor(
    readonly sessionId: string,
    readonly detail: string,
  ) {
    super(`opencode session ${sessionId} halted without finishing its turn (${detail}); the answer is incomplete`);
  }
}
