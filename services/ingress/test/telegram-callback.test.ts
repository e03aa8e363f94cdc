import { CALLBACK_ACTIONS, formatCallbackData, parseCallbackData } from "@ratatoskr/contracts";
import { describe, expect, it } from "vitest";

describe("draft button callback data", () => {
  it("round-trips every action, the budget's Continue / Stop included", () => {
    expect([...CALLBACK_ACTIONS]).toEqual(["approve", "edit", "cancel", "more-budget", "stop"]);
    for (const action of CALLBACK_ACTIONS) {
      const data = formatCallbackData({ action, taskId: 12 });
      expect(data).toBe(`${action}:12`);
      expect(parseCallbackData(data)).toEqual({ action, taskId: 12 });
    }
  });

  it.each([
    "",
    "approve",
    "approve:",
    "approve:0",
    "approve:-1",
    "approve:1.5",
    "merge:3",
    "approve:3:x",
    " approve:3",
    "approve:12345678901234567",
    "more-budget",
    "more-budget:x",
    "stop:0",
    "budget:3",
  ])("rejects %j", (data) => expect(parseCallbackData(data)).toBeNull());

  it("refuses to format a task id that is not a positive integer", () => {
    expect(() => formatCallbackData({ action: "edit", taskId: 0 })).toThrow(/positive integer/);
  });
});
