import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { BotApiError, createBotApiClient } from "../src/telegram/bot-api-client.ts";

const TOKEN = "123:secret-token";

interface Seen {
  method: string | undefined;
  url: string | undefined;
  contentType: string | undefined;
  body: unknown;
}

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** A Bot API stand-in answering every call with `answer`; returns its root and what it saw. */
async function botApiServer(answer: (res: ServerResponse) => void): Promise<{ root: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      seen.push({
        method: req.method,
        url: req.url,
        contentType: req.headers["content-type"],
        body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown,
      });
      answer(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  server.on("connection", (socket) => socket.unref());
  return { root: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const json = (status: number, body: unknown) => (res: ServerResponse) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};

describe("the Bot API client", () => {
  it("posts the payload as JSON to bot<token>/<method>, without null fields, and returns the result", async () => {
    const { root, seen } = await botApiServer(json(200, { ok: true, result: { message_id: 7 } }));
    const result = await createBotApiClient(TOKEN, root).call("sendMessage", {
      chat_id: 1,
      text: "hé",
      reply_markup: null,
    });
    expect(result).toEqual({ message_id: 7 });
    expect(seen).toEqual([
      {
        method: "POST",
        url: `/bot${TOKEN}/sendMessage`,
        contentType: "application/json",
        body: { chat_id: 1, text: "hé" },
      },
    ]);
  });

  it("rejects an ok:false answer with the whole answer in `response` (retry_after included)", async () => {
    const answer = {
      ok: false,
      error_code: 429,
      description: "Too Many Requests",
      parameters: { retry_after: 3 },
    };
    const { root } = await botApiServer(json(429, answer));
    const failure = await createBotApiClient(TOKEN, root)
      .call("sendMessage", { chat_id: 1, text: "x" })
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(BotApiError);
    expect((failure as BotApiError).response).toEqual(answer);
  });

  it("rejects a 5xx as that status whatever its body (a proxy's HTML page), so it reads as Telegram's answer", async () => {
    const { root } = await botApiServer((res) => {
      res.writeHead(502, "Bad Gateway", { "content-type": "text/html" });
      res.end("<html>bad gateway</html>");
    });
    const failure = await createBotApiClient(TOKEN, root)
      .call("getMe", {})
      .catch((err: unknown) => err);
    expect((failure as BotApiError).response).toEqual({
      ok: false,
      error_code: 502,
      description: "Bad Gateway",
    });
  });

  it("rejects a refused connection with node's code, never with the token in the message", async () => {
    const { root } = await botApiServer(json(200, { ok: true, result: true }));
    await close!();
    close = undefined;
    const failure = (await createBotApiClient(TOKEN, root)
      .call("getMe", {})
      .catch((err: unknown) => err)) as NodeJS.ErrnoException;
    expect(failure.code).toBe("ECONNREFUSED");
    expect(failure.message).not.toContain(TOKEN);
  });
});
