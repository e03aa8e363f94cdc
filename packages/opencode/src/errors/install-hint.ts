/**
 * The opencode release this version of Ratatoskr is tested with: the root package.json pins
 * `opencode-ai` to it and the image ships it (a test keeps the two equal).
 */
export const TESTED_OPENCODE_VERSION = "1.18.33";

/** How to install that release, for the errors that tell a person to. */
export const OPENCODE_INSTALL_HINT = `npm i -g opencode-ai@${TESTED_OPENCODE_VERSION}`;
