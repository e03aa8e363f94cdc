import { describe, expect, it } from "vitest";
import { ChatSequencer } from "../src/telegram/delivery/chat-sequencer.ts";

/** A promise the test resolves by hand. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe("ChatSequencer", () => {
  it("runs one chat's work in call order, each after the previous finished", async () => {
    const sequencer = new ChatSequencer();
    const log: string[] = [];
    const first = gate();
    const a = sequencer.run(1, async () => {
      log.push("a:start");
      await first.opened;
      log.push("a:end");
    });
    const b = sequencer.run(1, async () => {
      log.push("b");
    });
    await Promise.resolve();
    expect(log).toEqual(["a:start"]);
    first.open();
    await Promise.all([a, b]);
    expect(log).toEqual(["a:start", "a:end", "b"]);
  });

  it("lets other chats run meanwhile", async () => {
    const sequencer = new ChatSequencer();
    const blocked = gate();
    const slow = sequencer.run(1, () => blocked.opened);
    let other = false;
    await sequencer.run(2, async () => {
      other = true;
    });
    expect(other).toBe(true);
    blocked.open();
    await slow;
  });

  it("reports a failure to its caller without blocking the chat", async () => {
    const sequencer = new ChatSequencer();
    const failing = sequencer.run(1, async () => {
      throw new Error("db down");
    });
    const next = sequencer.run(1, async () => undefined);
    await expect(failing).rejects.toThrow("db down");
    await expect(next).resolves.toBeUndefined();
    await sequencer.idle();
    expect(sequencer.busyChats).toBe(0);
  });
});
