import { describe, expect, it } from "vitest";
import { parseTaskNumber, parseText } from "../src/telegram/parsing/command-parser.ts";

describe("parseText", () => {
  it.each([
    ["/start", { kind: "command", command: "start", args: "" }],
    ["  /status 12  ", { kind: "command", command: "status", args: "12" }],
    ["/STATUS@Ratatoskr_Bot  #7", { kind: "command", command: "status", args: "#7" }],
    ["/retry\n12", { kind: "command", command: "retry", args: "12" }],
    ["/frobnicate x", { kind: "unknown-command", command: "/frobnicate" }],
    ["/старт", { kind: "unknown-command", command: "/старт" }],
    ["/start@other_bot", { kind: "foreign-command" }],
    ["fix /status page", { kind: "text", text: "fix /status page" }],
    ["/ not a command", { kind: "text", text: "/ not a command" }],
    [" go ", { kind: "text", text: "go" }],
  ])("%j → %j", (text, expected) => {
    expect(parseText(text, "ratatoskr_bot")).toEqual(expected);
  });

  it("accepts any @mention before the bot's username is known", () => {
    expect(parseText("/help@whoever")).toEqual({ kind: "command", command: "help", args: "" });
  });

  it("echoes at most 32 characters of an unknown command", () => {
    const parsed = parseText(`/${"x".repeat(100)}`);
    expect(parsed).toEqual({ kind: "unknown-command", command: `/${"x".repeat(32)}` });
  });
});

describe("parseTaskNumber", () => {
  it.each([
    ["12", { ok: true, taskId: 12 }],
    [" #12 ", { ok: true, taskId: 12 }],
    ["2147483647", { ok: true, taskId: 2_147_483_647 }],
    ["", { ok: false, given: null }],
    ["   ", { ok: false, given: null }],
    ["0", { ok: false, given: "0" }],
    ["-3", { ok: false, given: "-3" }],
    ["12abc", { ok: false, given: "12abc" }],
    ["12 13", { ok: false, given: "12 13" }],
    ["2147483648", { ok: false, given: "2147483648" }],
    ["1.5", { ok: false, given: "1.5" }],
  ])("%j → %j", (args, expected) => {
    expect(parseTaskNumber(args)).toEqual(expected);
  });

  it("shortens a long wrong argument it echoes back", () => {
    expect(parseTaskNumber("a".repeat(80))).toEqual({ ok: false, given: `${"a".repeat(32)}…` });
  });
});
