/** The run's hard deadline passed while it waited for one of the server's prompt slots. */
export class PromptQueueTimeoutError extends Error {
  override readonly name = "PromptQueueTimeoutError";
  constructor(
    readonly serverUrl: string,
    readonly waitedMs: number,
    readonly limit: number,
  ) {
    super(`waited ${waitedMs} ms for one of ${limit} prompt slots on ${serverUrl} (OPENCODE_MAX_PROMPTS_PER_SERVER); add servers to OPENCODE_URLS or raise the cap`);
  }
}
