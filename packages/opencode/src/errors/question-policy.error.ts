/** The run's `answerQuestion` callback threw while answering the agent's question. */
export class QuestionPolicyError extends Error {
  override readonly name = "QuestionPolicyError";
  constructor(
    readonly sessionId: string,
    readonly question: string,
    override readonly cause: unknown,
  ) {
    super(`answering the agent's question "${question.slice(0, 120)}" failed: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}
