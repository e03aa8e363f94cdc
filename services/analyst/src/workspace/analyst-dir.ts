import { mkdir } from "node:fs/promises";
import { join } from "node:path";

/**
 * The one directory every analyst session works in: empty, because the analyst reads no code, and
 * it stays empty because its policy (and agents/analyst.md) deny edits and commands, so no
 * session can leave anything there for another task's session to see. Shared rather than one per
 * task so that opencode boots it once (5-20 s on a loaded machine) — ahead of the first analysis,
 * when the service starts — instead of at the start of every task's first turn.
 */
export async function ensureAnalystDir(workspaceDir: string): Promise<string> {
  const dir = join(workspaceDir, "analyst", "shared");
  await mkdir(dir, { recursive: true });
  return dir;
}
