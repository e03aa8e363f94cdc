/** The opencode config file could not be read or its `model` is malformed. */
export class ModelConfigError extends Error {
  override readonly name = "ModelConfigError";
  constructor(
    readonly path: string,
    detail: string,
  ) {
    super(`opencode config ${path}: ${detail}`);
  }
}
