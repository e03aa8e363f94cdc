import { readFile, writeFile } from "node:fs/promises";
import { renderConfigTable } from "@ratatoskr/runtime";
import { fullConfigSchema } from "@ratatoskr/service-host";
import { ALL_SERVICES } from "./services.ts";

export const README_URL = new URL("../../../README.md", import.meta.url);
const BLOCK = /(<!-- config-table:start -->)[\s\S]*?(<!-- config-table:end -->)/;

/** The configuration table of everything the all-in-one entry reads. */
export function configTable(): string {
  return renderConfigTable(fullConfigSchema(ALL_SERVICES));
}

/** `pnpm docs:config` rewrites the README's table from the code. */
if (import.meta.url === `file://${process.argv[1]}`) {
  const readme = await readFile(README_URL, "utf8");
  await writeFile(README_URL, readme.replace(BLOCK, `$1\n\n${configTable()}\n\n$2`));
  console.error("README.md configuration table updated");
}
