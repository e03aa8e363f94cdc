// `pnpm db:migrate`: applies committed migrations to DATABASE_URL (schema DATABASE_SCHEMA or public).
import { applyMigrations } from "../migrations/apply-migrations.ts";

const connectionString = process.env.DATABASE_URL;
if (!connectionString) {
  console.error("DATABASE_URL is not set (e.g. postgresql://postgres@127.0.0.1:5432/ratatoskr)");
  process.exit(2);
}
const schema = process.env.DATABASE_SCHEMA || "public";
try {
  const applied = await applyMigrations({ connectionString, schema });
  if (applied.length === 0) console.log(`schema "${schema}": migrations up to date`);
  for (const name of applied) console.log(`schema "${schema}": applied ${name}`);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
}
