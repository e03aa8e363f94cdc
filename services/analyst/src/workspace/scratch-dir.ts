import { mkdir } from "node:fs/promises";
import { join } from "node:path";

/**
 * The analyst's session directory for one task: empty, because the analyst reads no code. Each
 * task gets its own, so nothing one session leaves behind is visible to another task's session.
 */
export async function ensureScratchDir(workspaceDir: string, taskId: number): Promise<string> {
  const dir = join(workspaceDir, "analyst", `task-${taskId}`);
  await mkdir(dir, { recursive: true });
  return dir;
}
