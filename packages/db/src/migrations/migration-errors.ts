export class MigrationChecksumError extends Error {
  override readonly name = "MigrationChecksumError";
  constructor(readonly migration: string) {
    super(
      `migration ${migration} was changed after it was applied (checksum differs); ` +
        "restore the committed file and add a new migration instead",
    );
  }
}

export class MigrationFailedError extends Error {
  override readonly name = "MigrationFailedError";
  constructor(
    readonly migration: string,
    cause: unknown,
  ) {
    super(`migration ${migration} failed: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
  }
}

/** Prisma's P3009: a migration started and never finished; a person must resolve it first. */
export class UnfinishedMigrationError extends Error {
  override readonly name = "UnfinishedMigrationError";
  constructor(readonly migration: string) {
    super(
      `migration ${migration} started but never finished; resolve it (prisma migrate resolve) before deploying`,
    );
  }
}
