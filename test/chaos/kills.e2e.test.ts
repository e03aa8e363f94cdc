import { expect, it } from "vitest";
import { chaosSuite, dialogueTrialsLeftOut } from "./chaos-suite.ts";

chaosSuite("kills");

it("CI runs every dialogue trial of pnpm chaos (in one of test/chaos's files)", () => {
  expect(dialogueTrialsLeftOut()).toEqual([]);
});
