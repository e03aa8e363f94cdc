import type pg from "pg";
import { pgDriver } from "./sql/pg-driver.ts";
import type { Prisma, PrismaClient } from "../generated/client.ts";
import { lazyClient } from "./lazy-client.ts";
import { assertSchemaName } from "./migrations/schema-name.ts";
import { PRISMA_MODELS } from "./prisma-models.ts";
import { registerSqlPool } from "./sql/sql-pool.ts";

export type { PrismaClient, Prisma };
export type {
  AgentTrace,
  DialogueTurn,
  FollowUp,
  GiteaSweepCursor,
  Notification,
  Task,
  TaskEvent,
  TelegramChat,
  WebhookDelivery,
} from "../generated/client.ts";

/** A client or the client of an open interactive transaction: what repositories accept. */
export type DbClient = Prisma.TransactionClient;

export interface DatabaseOptions {
  connectionString: string;
  /** Postgres schema holding the tables. Default `public`. */
  schema?: string;
  /**
   * An idle pooled connection failed (Postgres stopped or restarted ended it). The pool drops it
   * and connects anew on the next query; this only reports it. Default: ignored.
   */
  onIdleError?: (error: Error) => void;
}

export interface Database {
  prisma: PrismaClient;
  schema: string;
  /** The pool under the adapter, shared by Prisma and the plain-SQL hot paths. */
  pool: pg.Pool;
  close(): Promise<void>;
}

/**
 * One Prisma client per process (or per test file), created here and passed to repositories.
 * The schema goes to the adapter for generated queries and to search_path for raw ones
 * (`SELECT … FOR UPDATE`), so both see the same tables. The pg pool is ours and shared with
 * the adapter, so the hot paths written in plain SQL use the same connections.
 */
export function createDatabase({ connectionString, schema = "public", onIdleError }: DatabaseOptions): Database {
  assertSchemaName(schema);
  const pool = new pgDriver.Pool({ connectionString, options: `-c search_path=${schema}` });
  // Heard from the start: Prisma adds its own listener only once it connects, and a process whose
  // idle sweeps use this pool directly may never let it. An unheard `error` would crash the process.
  pool.on("error", (error) => onIdleError?.(error));
  // Loaded and built on first use: the idle sweeps and the hot paths run in plain SQL on the pool,
  // and Prisma's modules and client cost ~8 MB of RSS, so an idle process never holds them.
  const client = lazyClient(async () => {
    const [{ PrismaClient }, { PrismaPg }] = await Promise.all([
      import("../generated/client.ts"),
      import("@prisma/adapter-pg"),
    ]);
    return new PrismaClient({ adapter: new PrismaPg(pool, { schema }) });
  }, PRISMA_MODELS);
  const prisma = client.proxy;
  registerSqlPool(prisma, pool);
  let closing: Promise<void> | undefined;
  return {
    prisma,
    schema,
    pool,
    close: () =>
      (closing ??= (async () => {
        const loaded = await client.whenLoaded()?.catch(() => undefined);
        await loaded?.$disconnect();
        await pool.end();
      })()),
  };
}
