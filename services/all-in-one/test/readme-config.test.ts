import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { configTable, README_URL } from "../src/config-table.ts";

/** Cells of a markdown table, ignoring the padding prettier adds. */
function cells(table: string): string[][] {
  return table
    .trim()
    .split("\n")
    .filter((row) => row.startsWith("|") && !/^\|[\s|-]+\|$/.test(row))
    .map((row) =>
      row
        .split(/(?<!\\)\|/)
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
}

describe("README configuration table", () => {
  it("lists exactly the variables the services read (pnpm docs:config rewrites it)", async () => {
    const readme = await readFile(README_URL, "utf8");
    const documented =
      /<!-- config-table:start -->([\s\S]*?)<!-- config-table:end -->/.exec(readme)?.[1] ?? "";
    const expected = cells(configTable());
    expect(expected.length).toBeGreaterThan(15);
    expect(cells(documented)).toEqual(expected);
  });
});
