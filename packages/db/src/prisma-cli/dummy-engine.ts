import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Prisma CLIs try to download engine binaries unless PRISMA_*_ENGINE_* point at existing files.
 * The commands we run never execute them (generate uses none; the Prisma 6 diff runs the WASM
 * schema engine), so an empty executable file is enough on a machine that cannot download.
 */
export function ensureDummyEngine(dir = join(tmpdir(), "ratatoskr-prisma")): string {
  const file = join(dir, "dummy-engine");
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, "#!/bin/sh\necho 'dummy prisma engine: not runnable on this machine' >&2\nexit 1\n");
    chmodSync(file, 0o755);
  }
  return file;
}

/** Environment for a Prisma CLI child process that must not download anything. */
export function offlinePrismaEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const engine = ensureDummyEngine();
  return {
    ...env,
    PRISMA_SCHEMA_ENGINE_BINARY: env.PRISMA_SCHEMA_ENGINE_BINARY ?? engine,
    PRISMA_QUERY_ENGINE_LIBRARY: env.PRISMA_QUERY_ENGINE_LIBRARY ?? engine,
    CHECKPOINT_DISABLE: "1",
    PRISMA_HIDE_UPDATE_MESSAGE: "1",
  };
}
