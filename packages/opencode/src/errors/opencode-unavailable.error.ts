/** The server could not be reached at all (refused, DNS, timeout). */
export class OpencodeUnavailableError extends Error {
  override readonly name = "OpencodeUnavailableError";
  constructor(
    readonly url: string,
    readonly causeMessage: string,
  ) {
    super(`opencode serve unreachable at ${url}: ${causeMessage}. Start it with \`opencode serve --hostname 127.0.0.1 --port <port>\` (npm i -g opencode-ai@latest).`);
  }
}
