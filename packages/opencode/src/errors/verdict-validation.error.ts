/** The agent's answer held no JSON verdict that satisfies the caller's schema (after the repair prompt). */
export class VerdictValidationError extends Error {
  override readonly name = "VerdictValidationError";
  constructor(
    readonly problem: string,
    readonly output: string,
  ) {
    super(`agent verdict invalid: ${problem}`);
  }
}
