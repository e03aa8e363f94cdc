import { describe, expect, it } from "vitest";
import type { OpencodeApi } from "../src/api/opencode-api.ts";
import { PromptTakenUp } from "../src/run/prompt-taken-up.ts";

type Page = {
  data: Array<{ type: string; durable?: { seq: number }; data?: { messageID?: string } }>;
  hasMore: boolean;
};

/** A history endpoint serving `events` in pages of `size` after a cursor, recording each cursor asked for. */
function history(events: Page["data"], size = 2) {
  const asked: Array<number | undefined> = [];
  const api = {
    history: async (_session: string, after: number | undefined): Promise<Page> => {
      asked.push(after);
      const rest = events.filter((e) => after === undefined || (e.durable?.seq ?? 0) > after);
      return { data: rest.slice(0, size), hasMore: rest.length > size };
    },
  } as unknown as OpencodeApi;
  return { api, asked };
}

const ev = (seq: number, type: string, messageID?: string) => ({
  type,
  durable: { seq },
  ...(messageID ? { data: { messageID } } : {}),
});

describe("PromptTakenUp (whether opencode took a prompt up, from the session's history)", () => {
  it("says no until the history holds 'prompted' for this very message, reading only what is new", async () => {
    const events = [ev(1, "session.created"), ev(2, "session.next.prompted", "msg_old")];
    const { api, asked } = history(events);
    const taken = new PromptTakenUp(api, "ses_1", "msg_new");
    expect(await taken.check(undefined)).toBe(false);
    events.push(ev(3, "message.updated"), ev(4, "session.next.prompted", "msg_new"));
    expect(await taken.check(undefined)).toBe(true);
    expect(asked).toEqual([undefined, 2]);
  });

  it("reads a long history across pages, at most five per look, and remembers a yes", async () => {
    const events = [
      ...Array.from({ length: 14 }, (_, i) => ev(i + 1, "message.part.updated")),
      ev(15, "session.next.prompted", "msg_x"),
    ];
    const { api, asked } = history(events);
    const taken = new PromptTakenUp(api, "ses_1", "msg_x");
    expect(await taken.check(undefined)).toBe(false); // 5 pages of 2 = 10 events
    expect(await taken.check(undefined)).toBe(true);
    const before = asked.length;
    expect(await taken.check(undefined)).toBe(true);
    expect(asked.length).toBe(before);
  });
});
