import { describe, expect, it } from "vitest";
import type { OpencodeServerHandle } from "../src/pool/opencode-server-handle.ts";
import { PromptGate } from "../src/pool/prompt-gate.ts";
import { ServerPool } from "../src/pool/server-pool.ts";

/** Only what placement reads: the url and the prompt gate. */
const handle = (url: string, limit = 2) => ({ url, gate: new PromptGate(limit, url) }) as unknown as OpencodeServerHandle;

describe("placing a new session", () => {
  it("goes to the server that has loaded its directory while it has a free slot, even when another is idler", async () => {
    const [a, b] = [handle("http://a"), handle("http://b")];
    const pool = new ServerPool([a, b]);
    await b.gate.acquire();
    expect([pool.place("http://b").url, pool.place("http://b/").url]).toEqual(["http://b", "http://b"]);
  });

  it("goes to the least-loaded server when the preferred one is full, unknown or not named", async () => {
    const [a, b] = [handle("http://a"), handle("http://b")];
    const pool = new ServerPool([a, b]);
    await b.gate.acquire();
    await b.gate.acquire();
    expect(pool.place("http://b").url).toBe("http://a");
    expect(pool.place("http://elsewhere").url).toBe("http://a");
    expect(pool.place(undefined).url).toBe("http://a");
  });
});
