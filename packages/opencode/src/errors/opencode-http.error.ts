/** A request reached the server and got a non-2xx answer. */
export class OpencodeHttpError extends Error {
  override readonly name = "OpencodeHttpError";
  constructor(
    readonly method: string,
    readonly url: string,
    readonly status: number,
    readonly body: string,
  ) {
    super(`opencode ${method} ${url} answered ${status}: ${body.slice(0, 300)}`);
  }
}
