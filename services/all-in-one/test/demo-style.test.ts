import { describe, expect, it } from "vitest";
import { demoStyle, renderButtons, summariseLogLine, useColour } from "../src/demo/demo-style.ts";

describe("the demo's look", () => {
  it("uses colour on a terminal only, and never with NO_COLOR or TERM=dumb", () => {
    expect(useColour(true, {})).toBe(true);
    expect(useColour(false, {})).toBe(false);
    expect(useColour(true, { NO_COLOR: "1" })).toBe(false);
    expect(useColour(true, { TERM: "dumb" })).toBe(false);
    expect(demoStyle(true).person("hi")).toContain("\u001b[");
    const plain = demoStyle(false);
    expect([plain.person("a"), plain.dim("b"), plain.bold("c"), plain.button("d"), plain.warn("e")]).toEqual([
      "a",
      "b",
      "c",
      "d",
      "e",
    ]);
  });

  it("draws an inline keyboard as the chat shows it, one line per row", () => {
    const keyboard = [[{ text: "✅ Approve" }, { text: "✏️ Edit" }], [], [{ text: "✖ Cancel" }]];
    expect(renderButtons(keyboard, demoStyle(false))).toEqual([
      "[ ✅ Approve ]  [ ✏️ Edit ]",
      "[ ✖ Cancel ]",
    ]);
    expect(renderButtons(undefined, demoStyle(false))).toEqual([]);
  });

  it("reduces a JSON log line with an error to one line without its stack", () => {
    const line = JSON.stringify({
      level: "error",
      component: "analyst",
      msg: "opencode server not usable",
      err: {
        message: "The operation was aborted due to timeout",
        stack: "TimeoutError: x\n    at f (a.js:1:2)",
      },
    });
    expect(summariseLogLine(`${line}\n`, demoStyle(false))).toBe(
      "  ⚠ analyst: opencode server not usable (The operation was aborted due to timeout)",
    );
    expect(summariseLogLine("not json", demoStyle(false))).toBeUndefined();
  });
});
