/** A run stopped before its answer: idle or hard timeout, or the caller's cancel. */
export class RunStoppedError extends Error {
  override readonly name = "RunStoppedError";
  constructor(
    readonly reason: "idle" | "hard" | "cancelled",
    readonly sessionId: string | undefined,
    /** True when opencode confirmed the interrupt (false: the turn may still be running). */
    readonly interrupted: boolean,
    message: string,
  ) {
    super(message);
  }
}
