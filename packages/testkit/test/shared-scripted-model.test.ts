import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reply, startSharedScriptedModel, type ScriptedModelServer } from "../src/index.ts";

let server: ScriptedModelServer;
beforeAll(async () => {
  server = await startSharedScriptedModel();
});
afterAll(async () => {
  await server?.close();
});

/** A chat call as opencode makes it: its system prompt names the session's directory. */
async function chat(directory: string | undefined, prompt: string, sessionId = "ses_1"): Promise<string> {
  const system = `You are TEST.\n<env>\n  Working directory: ${directory ?? ""}\n  Platform: linux\n</env>`;
  const res = await fetch(`${server.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-session-id": sessionId },
    body: JSON.stringify({ model: "scripted", stream: true, messages: [...(directory ? [{ role: "system", content: system }] : []), { role: "user", content: prompt }] }),
  });
  const frames = (await res.text()).split("\n\n").filter((f) => f.startsWith("data: {"));
  return frames.map((f) => (JSON.parse(f.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? "").join("");
}

describe("a scripted model shared by test files", () => {
  it("answers and records each request in the view that claims its directory, numbered within that view", async () => {
    const a = server.openView(["/work/a"]);
    const b = server.openView(["/work/b"]);
    a.addRule({ match: { promptIncludes: "hi" }, reply: [reply.text("from a")] });
    b.addRule({ match: { promptIncludes: "hi" }, reply: [reply.text("from b")] });

    expect(await chat("/work/a/task-1", "hi")).toBe("from a");
    expect(await chat("/work/b", "hi", "ses_2")).toBe("from b");
    expect(await chat("/work/a/task-2", "bye", "ses_3")).toContain("no rule matched");

    expect(a.requests.map((r) => [r.seq, r.lastUserText])).toEqual([[1, "hi"], [2, "bye"]]);
    expect(b.requests.map((r) => [r.seq, r.lastUserText])).toEqual([[1, "hi"]]);
    await Promise.all([a.close(), b.close()]);
  });

  it("gives a directory nobody claims, or a request without one, to the newest open view", async () => {
    const older = server.openView(["/work/older"]);
    const newest = server.openView(["/work/newest"]);
    newest.addRule({ match: { promptIncludes: "where" }, reply: [reply.text("newest"), reply.text("newest again")] });

    expect(await chat("/somewhere/else", "where")).toBe("newest");
    expect(await chat(undefined, "where", "ses_9")).toBe("newest");
    expect(older.requests).toHaveLength(0);
    expect(newest.requests).toHaveLength(2);
    await Promise.all([older.close(), newest.close()]);
  });

  it("answers a session a closed view left behind with the fallback, recorded by no view, even when another is open", async () => {
    const finished = server.openView(["/work/finished"]);
    finished.addRule({ match: { promptIncludes: "late" }, reply: [reply.text("never")] });
    await finished.close();
    const running = server.openView(["/work/running"]);
    running.addRule({ match: { promptIncludes: "late" }, reply: [reply.text("wrong view")] });

    expect(await chat("/work/finished/task-7", "late")).toMatch(/has finished/);
    expect(running.requests).toHaveLength(0);
    expect(finished.requests).toHaveLength(0);
    await running.close();
  });

  it("hangs up a held answer when its view closes, so a shared server's session does not wait forever", async () => {
    const view = server.openView(["/work/held"]);
    view.addRule({ match: { promptIncludes: "hold" }, reply: [{ text: "never sent", holdUntil: new Promise(() => undefined) }] });
    const answer = chat("/work/held", "hold").then(
      (text) => ({ text }),
      (error: unknown) => ({ error }),
    );
    await expect.poll(() => view.requests.length).toBe(1);
    await view.close();
    const outcome = await answer;
    expect("text" in outcome ? outcome.text : "").not.toContain("never sent");
    await expect.poll(() => view.requests[0]?.aborted).toBe(true);
  });

  it("claims a directory added after the view opened", async () => {
    const view = server.openView([]);
    const other = server.openView(["/work/other"]);
    view.claim("/work/later");
    view.addRule({ match: { promptIncludes: "x" }, reply: [reply.text("mine")] });
    expect(await chat("/work/later/d", "x")).toBe("mine");
    expect(other.requests).toHaveLength(0);
    await Promise.all([view.close(), other.close()]);
  });
});
