import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Stands between the bot and the fake Telegram and misbehaves on request, the way the real one
 * does on a bad day: a send that reaches the chat but is answered late, or not at all (the
 * connection reset after delivery), and long polling that hands out the same updates again.
 */
export type TelegramFault =
  /** sendMessage is delivered, the answer comes after `delayMs`. */
  | { kind: "slow-send"; delayMs: number }
  /** sendMessage is delivered, then the connection is reset instead of answered. */
  | { kind: "reset-send" }
  /** getUpdates returns every update it returned before once more, ahead of the new ones. */
  | { kind: "replay-updates" };

export interface TelegramProxy {
  readonly url: string;
  /** Applies `fault` to the next `times` matching calls (default: until `clear`). */
  inject(fault: TelegramFault, times?: number): void;
  clear(): void;
  /**
   * The next sendMessage to `chatId` whose text contains `text` is delivered, and its answer held
   * until `until` settles: the sender may die with the message in the chat, never told it arrived.
   */
  holdSend(chatId: number, text: string, until: Promise<unknown>): void;
  /** How many calls a fault was applied to so far. */
  readonly applied: number;
  /** sendMessage calls forwarded and not yet answered to the bot. */
  readonly sendsInFlight: number;
  close(): Promise<void>;
}

const METHOD = /\/bot[^/]+\/([^/?]+)/;

interface SendHold {
  chatId: number;
  text: string;
  until: Promise<unknown>;
}

/** chat_id and text of a sendMessage, sent as JSON or as a form. */
function sendOf(body: Buffer): { chatId: number; text: string } {
  const raw = body.toString("utf8");
  let params: Record<string, unknown>;
  try {
    params = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    params = Object.fromEntries(new URLSearchParams(raw));
  }
  return { chatId: Number(params.chat_id), text: String(params.text ?? "") };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

export async function startTelegramProxy(target: string): Promise<TelegramProxy> {
  let fault: TelegramFault | undefined;
  let remaining = Infinity;
  let applied = 0;
  let inFlight = 0;
  const seenUpdates = new Map<number, unknown>();
  const timers = new Set<NodeJS.Timeout>();
  const holds: SendHold[] = [];

  /** The hold this send matches, taken off the list. */
  const heldBy = (body: Buffer): SendHold | undefined => {
    const send = sendOf(body);
    const at = holds.findIndex((h) => h.chatId === send.chatId && send.text.includes(h.text));
    return at < 0 ? undefined : holds.splice(at, 1)[0];
  };

  const take = (kind: TelegramFault["kind"]): TelegramFault | undefined => {
    if (!fault || fault.kind !== kind || remaining <= 0) return undefined;
    remaining -= 1;
    applied += 1;
    return fault;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const method = (METHOD.exec(req.url ?? "")?.[1] ?? "").toLowerCase();
    const body = await readBody(req);
    const headers: Record<string, string> = {};
    if (req.headers["content-type"]) headers["content-type"] = req.headers["content-type"];
    const isSend = method === "sendmessage";
    if (isSend) inFlight += 1;
    try {
      const upstream = await fetch(`${target}${req.url}`, {
        method: req.method ?? "GET",
        headers,
        ...(req.method === "GET" || req.method === "HEAD" ? {} : { body }),
      });
      let text = await upstream.text();
      if (method === "getupdates") text = replayed(text);
      const answer = () => {
        res.writeHead(upstream.status, { "content-type": "application/json" });
        res.end(text);
      };
      if (isSend && take("reset-send")) return req.socket.destroy();
      const hold = isSend && upstream.ok ? heldBy(body) : undefined;
      if (hold) await hold.until.catch(() => undefined);
      const slow = isSend ? take("slow-send") : undefined;
      if (slow?.kind === "slow-send") {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => (timers.delete(timer), resolve()), slow.delayMs);
          timers.add(timer);
        });
      }
      if (!res.destroyed) answer();
    } finally {
      if (isSend) inFlight -= 1;
    }
  };

  /** Remembers the updates handed out; while replaying, hands the earlier ones out again too. */
  const replayed = (text: string): string => {
    let parsed: { ok: boolean; result?: Array<{ update_id: number }> };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      return text;
    }
    if (!parsed.ok || !Array.isArray(parsed.result)) return text;
    const fresh = parsed.result;
    const again = fresh.length > 0 && take("replay-updates") ? [...seenUpdates.values()] : [];
    for (const update of fresh) seenUpdates.set(update.update_id, update);
    if (again.length === 0) return text;
    return JSON.stringify({ ...parsed, result: [...again, ...fresh] });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(502).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    inject(next, times = Infinity) {
      fault = next;
      remaining = times;
    },
    clear() {
      fault = undefined;
    },
    holdSend(chatId, text, until) {
      holds.push({ chatId, text, until });
    },
    get applied() {
      return applied;
    },
    get sendsInFlight() {
      return inFlight;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
