import { once } from "node:events";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reply, startScriptedModel, type ScriptedModel } from "../src/index.ts";

let model: ScriptedModel;
beforeAll(async () => {
  model = await startScriptedModel();
});
afterAll(async () => {
  await model?.close();
});

async function chat(messages: object[], sessionId = "ses_test"): Promise<{ status: number; frames: string[] }> {
  const res = await fetch(`${model.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-session-id": sessionId },
    body: JSON.stringify({ model: "scripted", stream: true, messages, tools: [{ type: "function", function: { name: "write" } }] }),
  });
  const body = await res.text();
  return { status: res.status, frames: body.split("\n\n").filter(Boolean) };
}

describe("scripted model", () => {
  it("lists its model", async () => {
    const res = await fetch(`${model.url}/models`);
    expect(((await res.json()) as { data: Array<{ id: string }> }).data[0]?.id).toBe("scripted");
  });

  it("streams a text turn as SSE chunks ending in [DONE] and records the request", async () => {
    model.addRule({ name: "greeter", match: { systemIncludes: "GREETER", promptIncludes: "hi" }, reply: [reply.text("hello there", { chunks: 3 })] });
    const { status, frames } = await chat([{ role: "system", content: "You are GREETER" }, { role: "user", content: "hi" }], "ses_text");
    expect(status).toBe(200);
    expect(frames.at(-1)).toBe("data: [DONE]");
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.replace(/^data: /, "")) as { choices: Array<{ delta: { content?: string }; finish_reason: string | null }> });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("hello there");
    expect(chunks.some((c) => c.choices[0]?.finish_reason === "stop")).toBe(true);
    const recorded = model.requestsFor("ses_text")[0];
    expect(recorded).toMatchObject({ answeredBy: "greeter", lastUserText: "hi", tools: ["write"], aborted: false });
    expect(recorded?.system).toContain("GREETER");
  });

  it("continues a rule's turns across a tool result, then falls back when exhausted", async () => {
    model.addRule({ name: "writer", match: { promptIncludes: "WRITE" }, reply: [reply.write("a.txt", "x"), reply.text("written")] });
    const first = await chat([{ role: "user", content: "WRITE it" }], "ses_tool");
    const call = JSON.parse(first.frames[0]!.replace(/^data: /, "")) as { choices: Array<{ delta: { tool_calls: Array<{ function: { name: string; arguments: string } }> } }> };
    expect(call.choices[0]?.delta.tool_calls[0]?.function).toEqual({ name: "write", arguments: JSON.stringify({ path: "a.txt", content: "x" }) });
    expect(first.frames.join()).toContain('"finish_reason":"tool_calls"');
    await chat([{ role: "user", content: "WRITE it" }, { role: "assistant", content: null }, { role: "tool", content: "ok" }], "ses_tool");
    await chat([{ role: "user", content: "WRITE it" }, { role: "user", content: "again" }], "ses_tool");
    expect(model.requestsFor("ses_tool").map((r) => `${r.answeredBy}:${r.turnIndex}`)).toEqual(["writer:0", "writer:1", "fallback:0"]);
  });

  it("holds an answer until the test lets it go", async () => {
    let letGo!: () => void;
    model.addRule({ match: { promptIncludes: "HOLD" }, reply: [reply.json({ done: true }, { holdUntil: new Promise<void>((resolve) => (letGo = resolve)) })] });
    const answer = chat([{ role: "user", content: "HOLD it" }], "ses_hold");
    await expect.poll(() => model.requestsFor("ses_hold").length).toBe(1);
    const [held] = model.requestsFor("ses_hold");
    // Asked, and still waiting: the answer has not ended while it is held.
    expect(held?.endedAt).toBeUndefined();
    letGo();
    const { frames } = await answer;
    expect(frames.join()).toContain(JSON.stringify(JSON.stringify({ done: true })).slice(1, -1));
    expect(held?.endedAt).toBeDefined();
  });

  it("keeps an idle connection open past Node's 5 s default: the client closes its idle connections", async () => {
    const { hostname, port } = new URL(model.url);
    const socket = connect(Number(port), hostname);
    await once(socket, "connect");
    let received = "";
    socket.on("data", (chunk: Buffer) => (received += chunk.toString()));
    let closedAt: number | undefined;
    socket.on("close", () => (closedAt = Date.now()));
    const ask = () => socket.write(`GET /v1/models HTTP/1.1\r\nHost: ${hostname}\r\nConnection: keep-alive\r\n\r\n`);
    const answers = () => received.split("HTTP/1.1 200").length - 1;
    try {
      ask();
      await expect.poll(answers).toBe(1);
      // The server closing first is the race this guards against: watched for past the 6 s at
      // which Node's default (5 s, and a second of grace) closes it.
      const idleUntil = Date.now() + 7_000;
      await expect.poll(() => closedAt !== undefined || Date.now() >= idleUntil, { timeout: 9_000, interval: 100 }).toBe(true);
      expect(closedAt).toBeUndefined();
      ask();
      await expect.poll(answers).toBe(2);
    } finally {
      socket.destroy();
    }
  });

  it("answers an scripted HTTP error", async () => {
    model.addRule({ match: { promptIncludes: "BOOM" }, reply: [reply.httpError(503, "overloaded")] });
    const { status } = await chat([{ role: "user", content: "BOOM" }], "ses_err");
    expect(status).toBe(503);
  });
});
