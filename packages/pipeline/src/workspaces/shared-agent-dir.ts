import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { OpencodeClient } from "@ratatoskr/opencode";
import type { Logger } from "@ratatoskr/runtime";

/**
 * The one directory every session of a read-only agent (analyst, postmortem) works in: empty,
 * because such an agent reads no code, and it stays empty because its policy denies edits and
 * commands, so no session can leave anything there for another task's session to see. Shared
 * rather than one per task so that opencode boots it once (5-20 s on a loaded machine), when the
 * service starts, instead of at the start of every task's first run.
 */
export async function ensureSharedAgentDir(workspaceDir: string, agent: string): Promise<string> {
  const dir = join(workspaceDir, agent, "shared");
  await mkdir(dir, { recursive: true });
  return dir;
}

/**
 * Has opencode boot `directory` in the background; a failure is only a warning (the first run
 * then waits for the boot itself). Returns the function that stops the warm-up.
 */
export function warmSharedAgentDir(
  client: Pick<OpencodeClient, "warmDirectory">,
  directory: string,
  logger: Logger,
): () => void {
  const warming = new AbortController();
  const startedAt = Date.now();
  void client.warmDirectory(directory, { signal: warming.signal }).then(
    () => logger.info({ directory, ms: Date.now() - startedAt }, "agent directory warmed on opencode"),
    (err: unknown) => {
      if (warming.signal.aborted) return;
      // An unreachable server is a state, not a bug: its message says what to do, no stack.
      if ((err as { name?: string }).name === "OpencodeUnavailableError")
        logger.warn({ reason: (err as Error).message, directory }, "opencode is not reachable yet; the agent directory is warmed by the first run");
      else logger.warn({ err, directory }, "could not warm the agent directory; the first run waits for it");
    },
  );
  return () => warming.abort();
}
