// `pnpm db:diff [--create <name>]`: the SQL from the committed schema (git HEAD) to the working
// schema.prisma, as Prisma would write it. With --create it becomes a new migration folder.
// Needs DATABASE_URL: the offline Prisma CLI connects even for a datamodel-only diff.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { MIGRATIONS_DIR, PRISMA_SCHEMA_PATH, REPO_ROOT } from "../paths.ts";
import { migrateDiffScript, type DiffSide } from "../prisma-cli/migrate-diff.ts";

function committedSchema(): DiffSide {
  try {
    const datamodel = execFileSync("git", ["show", "HEAD:prisma/schema.prisma"], {
      cwd: REPO_ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    return { datamodel };
  } catch {
    return { empty: true };
  }
}

function timestamp(now = new Date()): string {
  return now.toISOString().replace(/\D/g, "").slice(0, 14);
}

const { values } = parseArgs({ options: { create: { type: "string" } } });
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error("DATABASE_URL is not set: the offline Prisma CLI needs a reachable Postgres");
  process.exit(2);
}
const sql = await migrateDiffScript({
  from: committedSchema(),
  to: { datamodel: readFileSync(PRISMA_SCHEMA_PATH, "utf8") },
  databaseUrl,
});
if (!values.create) {
  process.stdout.write(sql);
} else if (!/^[a-z0-9_]+$/.test(values.create)) {
  console.error("--create takes a snake_case name, e.g. add_task_labels");
  process.exitCode = 2;
} else if (sql.includes("-- This is an empty migration.")) {
  console.error("schema.prisma has no changes against HEAD: nothing to create");
  process.exitCode = 1;
} else {
  const dir = join(MIGRATIONS_DIR, `${timestamp()}_${values.create}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "migration.sql"), sql);
  console.log(`created ${dir}/migration.sql`);
}
