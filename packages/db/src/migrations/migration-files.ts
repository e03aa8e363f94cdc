import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

export interface MigrationFile {
  /** Folder name, e.g. `20261129070000_init`; Prisma applies them sorted by it. */
  name: string;
  sql: string;
  /** sha256 hex of the migration.sql bytes, as Prisma stores it in `_prisma_migrations`. */
  checksum: string;
}

export function migrationChecksum(bytes: Buffer | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

export async function readMigrationFiles(migrationsDir: string): Promise<MigrationFile[]> {
  const entries = await readdir(migrationsDir, { withFileTypes: true });
  const names = entries
    .filter((entry) => entry.isDirectory() && existsSync(join(migrationsDir, entry.name, "migration.sql")))
    .map((entry) => entry.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const bytes = await readFile(join(migrationsDir, name, "migration.sql"));
      return { name, sql: bytes.toString("utf8"), checksum: migrationChecksum(bytes) };
    }),
  );
}
