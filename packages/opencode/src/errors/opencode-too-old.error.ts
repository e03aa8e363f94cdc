import { OPENCODE_INSTALL_HINT } from "./install-hint.ts";

/** The server answers but is older than the v2 API this client needs. */
export class OpencodeTooOldError extends Error {
  override readonly name = "OpencodeTooOldError";
  constructor(
    readonly url: string,
    readonly version: string,
    readonly minVersion: string,
  ) {
    super(
      `opencode at ${url} is version ${version}, needs >= ${minVersion}: run \`${OPENCODE_INSTALL_HINT}\` and restart \`opencode serve\`.`,
    );
  }
}
