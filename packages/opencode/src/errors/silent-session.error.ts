/** The prompt was admitted but the session never ran and produced no answer. */
export class SilentSessionError extends Error {
  override readonly name = "SilentSessionError";
  constructor(
    readonly sessionId: string,
    readonly serverUrl: string,
    readonly model: string | undefined,
    hint = "",
  ) {
    super(
      `opencode session ${sessionId} on ${serverUrl} accepted the prompt but never ran and produced no answer. ` +
        `The model ${model ?? "(server default)"} may be unavailable: check the providers in the server's opencode.json and its log.${hint ? ` ${hint}` : ""}`,
    );
  }
}
