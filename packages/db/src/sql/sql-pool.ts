import type pg from "pg";
import { pgDriver } from "./pg-driver.ts";
import type { PrismaClient } from "../../generated/client.ts";

/**
 * The pg pool under a Prisma client's adapter, for the few hot paths written in plain SQL
 * (transitions, dispatch marks). Registered by createDatabase; a client built elsewhere has
 * none and those paths fall back to Prisma.
 */
const pools = new WeakMap<PrismaClient, pg.Pool>();

export function registerSqlPool(prisma: PrismaClient, pool: pg.Pool): void {
  pools.set(prisma, pool);
}

export function sqlPoolOf(prisma: PrismaClient): pg.Pool | undefined {
  return pools.get(prisma);
}

/** The pool for paths that have no Prisma fallback (the idle sweeps: Prisma's query compiler stays unloaded while idle). */
export function requireSqlPool(prisma: PrismaClient): pg.Pool {
  const pool = pools.get(prisma);
  if (!pool) throw new Error("this query needs the pg pool of a client made by createDatabase");
  return pool;
}

const TIMESTAMP_OID = 1114;
const INT8_OID = 20;

/**
 * Parsers that read rows the way Prisma does: `timestamp(3)` columns hold UTC (pg would read
 * them as local time) and `bigint` columns become BigInt (pg would give strings).
 */
export const prismaLikeTypes = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (format !== "binary") {
      if (oid === TIMESTAMP_OID) return (value: string) => new Date(`${value.replace(" ", "T")}Z`);
      if (oid === INT8_OID) return (value: string) => BigInt(value);
    }
    return pgDriver.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

const camelNames = new Map<string, string>();

function camelName(key: string): string {
  let name = camelNames.get(key);
  if (name === undefined) {
    name = key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    camelNames.set(key, name);
  }
  return name;
}

/** snake_case row keys to the camelCase fields of Prisma's models (their @map is exactly that). */
export function camelRow<T>(row: Record<string, unknown>): T {
  const out: Record<string, unknown> = {};
  for (const key in row) out[camelName(key)] = row[key];
  return out as T;
}
