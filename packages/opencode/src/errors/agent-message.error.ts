/** The assistant message itself ended with an error (provider error, aborted, …). */
export class AgentMessageError extends Error {
  override readonly name: string = "AgentMessageError";
  constructor(
    readonly sessionId: string,
    detail: string,
  ) {
    super(`opencode session ${sessionId} ended with an error: ${detail}`);
  }
}
