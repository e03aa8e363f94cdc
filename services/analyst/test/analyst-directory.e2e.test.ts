import { readdir } from "node:fs/promises";
import { reply } from "@ratatoskr/testkit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AnalystHarness, marker, opencodeAuth, section, WAIT } from "./support/analyst-harness.ts";

let h: AnalystHarness;

beforeAll(async () => {
  h = await AnalystHarness.start();
}, 90_000);
afterAll(async () => {
  await h?.stop();
});

const ask = (question: string) => reply.json({ phase: "ask", questions: [question] });
const bootsOf = (directory: string) => h.bootLog.boots.filter((b) => b.directory === directory);

describe("analyst: one pre-warmed directory shared by every analysis", () => {
  it("boots its directory on opencode when it starts, so the first analysis waits for no boot", async () => {
    // No task yet: only the service itself can have asked opencode for this directory.
    await vi.waitFor(() => expect(bootsOf(h.analystDir).length).toBeGreaterThan(0), {
      ...WAIT,
      timeout: 60_000,
    });
    // Wait until the booted location has the provider (the service's warm-up waits for the same).
    await vi.waitFor(
      async () => {
        const url = `${h.opencode.url}/api/provider/fake?location%5Bdirectory%5D=${encodeURIComponent(h.analystDir)}`;
        const res = await fetch(url, { headers: opencodeAuth(h.opencode) });
        await res.body?.cancel();
        expect(res.status).toBe(200);
      },
      { ...WAIT, timeout: 60_000 },
    );
    const bootsBefore = h.bootLog.boots.length;

    const m = marker("first");
    h.model.addRule({
      name: m,
      match: (req) =>
        req.system.includes(h.promptMark) && section(req.userTexts[0] ?? "", "newMessages").includes(m),
      reply: [ask("Which repository?")],
    });
    const task = await h.startTask(`Add dark mode ${m}`);
    expect(await h.settled(task.id)).toMatchObject({ status: "collecting", pendingTurns: 0 });
    expect(h.analystPrompts(m)).toHaveLength(1);
    expect(h.bootLog.boots.slice(bootsBefore)).toEqual([]);
  }, 120_000); // the boot alone takes 5-20 s on a loaded machine

  it("runs two tasks' analyses in the same directory, which stays empty though the model tries to write there", async () => {
    const a = marker("writer");
    const b = marker("reader");
    const onNew = (mark: string, replies: Parameters<typeof h.model.addRule>[0]["reply"]) =>
      h.model.addRule({
        name: mark,
        match: (req) =>
          req.system.includes(h.promptMark) && section(req.userTexts[0] ?? "", "newMessages").includes(mark),
        reply: replies,
      });
    onNew(a, [reply.write("left-behind.txt", "secret of task A\n"), ask("Which repository?")]);
    onNew(b, [ask("Which branch?")]);

    const first = await h.startTask(`Rename the button ${a}`);
    expect(await h.settled(first.id)).toMatchObject({ status: "collecting", pendingTurns: 0 });
    const second = await h.startTask(`Fix the footer ${b}`);
    expect(await h.settled(second.id)).toMatchObject({ status: "collecting", pendingTurns: 0 });

    // The write was refused (the analyst's policy denies edits): nothing is left for task B to read.
    const toolResult = h.model.requests.find((r) => r.isToolResult && r.userTexts.some((t) => t.includes(a)));
    expect(toolResult).toBeDefined();
    expect(await readdir(h.analystDir)).toEqual([]);
    const [traceA, traceB] = await Promise.all(
      [first.id, second.id].map(async (taskId) => (await h.host.context.repos.traces.list(taskId))[0]),
    );
    expect(traceA?.sessionId).toMatch(/^ses/);
    expect(traceB?.sessionId).not.toBe(traceA?.sessionId);
    const sessions = await Promise.all([traceA, traceB].map((t) => sessionDirectory(t?.sessionId as string)));
    expect(sessions).toEqual([h.analystDir, h.analystDir]);
  }, 60_000);
});

/** The directory opencode says a session works in. */
async function sessionDirectory(sessionId: string): Promise<string | undefined> {
  const res = await fetch(`${h.opencode.url}/api/session/${sessionId}`, {
    headers: opencodeAuth(h.opencode),
  });
  const body = (await res.json()) as { data?: { location?: { directory?: string }; directory?: string } };
  return body.data?.location?.directory ?? body.data?.directory;
}
