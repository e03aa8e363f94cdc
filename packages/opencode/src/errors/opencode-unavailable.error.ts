import { OPENCODE_INSTALL_HINT } from "./install-hint.ts";

/** The server could not be reached at all (refused, DNS, timeout). */
export class OpencodeUnavailableError extends Error {
  override readonly name = "OpencodeUnavailableError";
  constructor(
    readonly url: string,
    readonly causeMessage: string,
  ) {
    super(
      `opencode serve unreachable at ${url}: ${causeMessage}. Start it with \`opencode serve --hostname 127.0.0.1 --port <port>\` (${OPENCODE_INSTALL_HINT}).`,
    );
  }
}
