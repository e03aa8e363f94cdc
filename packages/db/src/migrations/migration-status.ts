import type pg from "pg";
import { MIGRATIONS_DIR } from "../paths.ts";
import { readMigrationFiles, type MigrationFile } from "./migration-files.ts";

/** Why a database cannot serve this code, in one line a person can act on. */
export class DatabaseNotReadyError extends Error {
  override readonly name = "DatabaseNotReadyError";
  constructor(
    readonly reason: "unreachable" | "refused-credentials" | "missing-database" | "not-migrated" | "changed-migration",
    message: string,
  ) {
    super(message);
  }
}

/** `host:port/database` of a connection string, without its credentials. */
export function describePostgres(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    return `${url.hostname}:${url.port || "5432"}${url.pathname}`;
  } catch {
    return "DATABASE_URL";
  }
}

const MIGRATE_HINT = "run `pnpm db:migrate` (or the image's migrate job) against it";

/** Pure: what the applied rows say about the committed migrations. */
export function migrationProblem(
  committed: readonly MigrationFile[],
  applied: ReadonlyArray<{ migration_name: string; checksum: string; finished_at: Date | null }>,
  where: string,
): DatabaseNotReadyError | undefined {
  const done = new Map(
    applied.filter((row) => row.finished_at !== null).map((r) => [r.migration_name, r.checksum]),
  );
  const pending = committed.filter((m) => !done.has(m.name));
  if (pending.length > 0) {
    const which =
      pending.length === committed.length
        ? "has no tables yet"
        : `lacks ${pending.length} migration(s), first ${pending[0]!.name}`;
    return new DatabaseNotReadyError(
      "not-migrated",
      `Postgres ${where} is not migrated: it ${which}; ${MIGRATE_HINT}`,
    );
  }
  const changed = committed.find((m) => done.get(m.name) !== m.checksum);
  if (changed)
    return new DatabaseNotReadyError(
      "changed-migration",
      `Postgres ${where}: migration ${changed.name} differs from the one applied; restore the committed file`,
    );
  return undefined;
}

const PG_MISSING_DATABASE = "3D000";
const PG_UNDEFINED_TABLE = "42P01";

/**
 * Checks that the database answers, exists, and has every committed migration applied in
 * `schema`; throws DatabaseNotReadyError saying which. Used at start-up and by readiness.
 */
export function createMigrationCheck(options: {
  pool: pg.Pool;
  connectionString: string;
  schema: string;
  migrationsDir?: string;
}): () => Promise<void> {
  let committed: Promise<MigrationFile[]> | undefined;
  const where = `${describePostgres(options.connectionString)} (schema "${options.schema}")`;
  return async () => {
    committed ??= readMigrationFiles(options.migrationsDir ?? MIGRATIONS_DIR);
    let rows: Array<{ migration_name: string; checksum: string; finished_at: Date | null }>;
    try {
      const result = await options.pool.query(
        `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL`,
      );
      rows = result.rows;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === PG_UNDEFINED_TABLE) rows = [];
      // Class 28, invalid authorization (a wrong password, an unknown role): waiting will not fix it.
      else if (code?.startsWith("28"))
        throw new DatabaseNotReadyError(
          "refused-credentials",
          `Postgres at ${describePostgres(options.connectionString)} refused the credentials (${error instanceof Error ? error.message : code}); fix the user or password in DATABASE_URL`,
        );
      else if (code === PG_MISSING_DATABASE)
        throw new DatabaseNotReadyError(
          "missing-database",
          `Postgres database at ${describePostgres(options.connectionString)} does not exist; create it, then ${MIGRATE_HINT}`,
        );
      else
        throw new DatabaseNotReadyError(
          "unreachable",
          `Postgres at ${describePostgres(options.connectionString)} is unreachable (${error instanceof Error ? error.message || code : String(error)}); start it or fix DATABASE_URL`,
        );
    }
    const problem = migrationProblem(await committed, rows, where);
    if (problem) throw problem;
  };
}
