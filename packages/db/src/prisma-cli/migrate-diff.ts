import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { DB_NODE_MODULES, REPO_ROOT } from "../paths.ts";
import { offlinePrismaEnv } from "./dummy-engine.ts";
import { toLegacySchema } from "./legacy-schema.ts";

const run = promisify(execFile);

/** One side of a diff: nothing, or the text of a (Prisma 7) schema.prisma. */
export type DiffSide = { empty: true } | { datamodel: string };

export interface MigrateDiffOptions {
  from: DiffSide;
  to: DiffSide;
  /** The Prisma 6 CLI connects through the adapter even for datamodel-only diffs. */
  databaseUrl: string;
}

// Plain object config: the Prisma 6.19 CLI with the WASM schema engine and the 7.x pg adapter
// (the 6.19 adapter breaks on Postgres `name` columns, prisma/orm#27403). allowExitOnIdle lets
// the CLI exit as soon as it is done instead of waiting for the pool's idle timeout.
const LEGACY_CONFIG = `import { PrismaPg } from "@prisma/adapter-pg";
export default {
  experimental: { adapter: true },
  engine: "js",
  schema: "schema.prisma",
  adapter: async () => new PrismaPg({ connectionString: process.env.DATABASE_URL, allowExitOnIdle: true }),
};
`;

/** Prisma 6 adds this to every from-empty script; a migration must not need CREATE on the database. */
const CREATE_PUBLIC_SCHEMA = /^-- CreateSchema\nCREATE SCHEMA IF NOT EXISTS "public";\n\n/m;

function legacyCliPath(): string {
  return createRequire(join(REPO_ROOT, "package.json")).resolve("prisma-migrate-offline/build/index.js");
}

/**
 * The SQL `prisma migrate diff --script` prints between two schemas, computed offline with the
 * Prisma 6.19 CLI (Prisma 7's diff needs a schema-engine binary this machine cannot download).
 */
export async function migrateDiffScript({ from, to, databaseUrl }: MigrateDiffOptions): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "ratatoskr-diff-"));
  try {
    const args = [legacyCliPath(), "migrate", "diff", "--script", "--config", "prisma.config.mjs"];
    for (const [flag, side] of [
      ["from", from],
      ["to", to],
    ] as const) {
      if ("empty" in side) {
        args.push(`--${flag}-empty`);
      } else {
        const file = `${flag}.prisma`;
        await writeFile(join(dir, file), toLegacySchema(side.datamodel));
        args.push(`--${flag}-schema-datamodel`, file);
      }
    }
    // The config names a schema file even when both sides are given on the command line.
    const configSchema = "datamodel" in to ? to.datamodel : "datamodel" in from ? from.datamodel : "";
    await writeFile(
      join(dir, "schema.prisma"),
      toLegacySchema(configSchema || 'datasource db {\n  provider = "postgresql"\n}\n'),
    );
    await writeFile(join(dir, "prisma.config.mjs"), LEGACY_CONFIG);
    const env = { ...offlinePrismaEnv(), DATABASE_URL: databaseUrl, NODE_PATH: DB_NODE_MODULES };
    const { stdout } = await run(process.execPath, args, { cwd: dir, env, maxBuffer: 16 * 1024 * 1024 });
    return `${stdout.replace(CREATE_PUBLIC_SCHEMA, "").trimEnd()}\n`;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr;
    throw new Error(`prisma migrate diff failed${stderr ? `: ${stderr.trim()}` : ""}`, { cause: error });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
