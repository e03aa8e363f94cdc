import { PrismaPg } from "@prisma/adapter-pg";
import { Prisma, PrismaClient } from "../generated/client.ts";
import { assertSchemaName } from "./migrations/schema-name.ts";

export { PrismaClient, Prisma };
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
}

export interface Database {
  prisma: PrismaClient;
  schema: string;
  close(): Promise<void>;
}

/**
 * One Prisma client per process (or per test file), created here and passed to repositories.
 * The schema goes to the adapter for generated queries and to search_path for raw ones
 * (`SELECT … FOR UPDATE`), so both see the same tables.
 */
export function createDatabase({ connectionString, schema = "public" }: DatabaseOptions): Database {
  assertSchemaName(schema);
  const adapter = new PrismaPg({ connectionString, options: `-c search_path=${schema}` }, { schema });
  const prisma = new PrismaClient({ adapter });
  return {
    prisma,
    schema,
    close: () => prisma.$disconnect(),
  };
}
