import { createServer } from "node:http";
import { Agent } from "undici";
import { describe, expect, it } from "vitest";
import { OpencodeHttp } from "../src/http/opencode-http.ts";
import type { SessionMessage } from "../src/api/api-schemas.ts";
import { messageError } from "../src/run/turn-summary.ts";

/** An answer nested far deeper than opencode ever sends: parsed JSON, as the client holds it. */
const deep = (levels: number): unknown => JSON.parse(`${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`);

describe("reading opencode's answers", () => {
  it("names an assistant error nested 5,000 levels deep instead of overflowing the stack", () => {
    const message = { type: "assistant", time: { created: 1 }, error: deep(5_000) } as unknown as SessionMessage;
    expect(messageError([message])).toBe("an error nested too deep to show");
    const shallow = { ...message, error: { code: 7 } } as unknown as SessionMessage;
    expect(messageError([shallow])).toBe('{"code":7}');
  });

  it("fails with a clear contract error when an answer is not JSON", async () => {
    const server = createServer((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end("<html>"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    const dispatcher = new Agent();
    try {
      const http = new OpencodeHttp({ baseUrl: `http://127.0.0.1:${port}`, dispatcher });
      await expect(http.json("GET", "/api/session/active")).rejects.toThrow(
        /the answer to GET \/api\/session\/active is not JSON/,
      );
    } finally {
      await dispatcher.close();
      server.close();
    }
  });
});
