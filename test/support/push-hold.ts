import { access, chmod, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** How long a held push waits for its release at most, in 50 ms steps (30 s). */
const MAX_WAIT_STEPS = 600;

export interface PushHold {
  /** Resolves once the bare repository took a push (its refs are updated): the worst moment to die. */
  taken(timeoutMs?: number): Promise<void>;
  /** Lets the held push answer, and stops holding later ones. */
  release(): Promise<void>;
}

/**
 * Holds the next push to a bare repository after the remote took it: a `post-receive` hook (run
 * once the refs are updated, while the pusher still waits for the answer) marks the push taken and
 * waits for the release. A test kills the pushing process in between — the push landed, the
 * process never learned it.
 */
export async function holdPushes(bare: string): Promise<PushHold> {
  const hook = join(bare, "hooks", "post-receive");
  const takenFile = join(bare, "push-taken");
  const releaseFile = join(bare, "push-released");
  const script = [
    "#!/bin/sh",
    `touch '${takenFile}'`,
    "i=0",
    `while [ ! -f '${releaseFile}' ] && [ $i -lt ${MAX_WAIT_STEPS} ]; do sleep 0.05; i=$((i+1)); done`,
    "",
  ].join("\n");
  await Promise.all([rm(takenFile, { force: true }), rm(releaseFile, { force: true })]);
  await writeFile(hook, script);
  await chmod(hook, 0o755);
  return {
    async taken(timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (await access(takenFile).then(() => true, () => false)) return;
        if (Date.now() > deadline) throw new Error(`no push reached ${bare} within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async release() {
      await rm(hook, { force: true });
      await writeFile(releaseFile, "");
    },
  };
}
