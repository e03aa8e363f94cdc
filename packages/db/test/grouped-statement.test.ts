import { describe, expect, it } from "vitest";
import { GroupedStatement } from "../src/sql/grouped-statement.ts";

describe("GroupedStatement", () => {
  it("runs a lone request at once and groups those that arrive while it is in flight", async () => {
    const groups: number[][] = [];
    let release: () => void = () => undefined;
    const statement = new GroupedStatement<number, number>(async (inputs) => {
      groups.push(inputs);
      if (groups.length === 1) await new Promise<void>((resolve) => (release = resolve));
      return inputs.map((n) => n * 10);
    });

    const first = statement.submit(1);
    const later = [statement.submit(2), statement.submit(3), statement.submit(4)];
    release();

    expect(await Promise.all([first, ...later])).toEqual([10, 20, 30, 40]);
    expect(groups).toEqual([[1], [2, 3, 4]]);
  });

  it("fails every request of a group whose statement failed, and goes on with the next", async () => {
    let calls = 0;
    const statement = new GroupedStatement<number, number>(async (inputs) => {
      calls += 1;
      if (calls === 1) throw new Error("database away");
      return inputs;
    });

    await expect(statement.submit(1)).rejects.toThrow("database away");
    expect(await statement.submit(2)).toBe(2);
  });
});
