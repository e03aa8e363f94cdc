import { fileURLToPath } from "node:url";

/** Repository root, resolved from this file so CLIs and tests work from any working directory. */
export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
export const PRISMA_SCHEMA_PATH = fileURLToPath(new URL("../../../prisma/schema.prisma", import.meta.url));
export const MIGRATIONS_DIR = fileURLToPath(new URL("../../../prisma/migrations", import.meta.url));
/** Where `@prisma/adapter-pg` lives; the Prisma 6 CLI's config file imports it from here. */
export const DB_NODE_MODULES = fileURLToPath(new URL("../node_modules", import.meta.url));
