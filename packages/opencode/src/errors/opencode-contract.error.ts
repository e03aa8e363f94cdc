import { OPENCODE_INSTALL_HINT } from "./install-hint.ts";

/** Health passed but the server's `/doc` lacks routes this client calls, or a response had an unexpected shape. */
export class OpencodeContractError extends Error {
  override readonly name = "OpencodeContractError";
  constructor(
    readonly url: string,
    detail: string,
  ) {
    super(
      `opencode at ${url} does not offer the expected v2 API: ${detail}. Install opencode-ai >= 1.18.18 (${OPENCODE_INSTALL_HINT}).`,
    );
  }
}
