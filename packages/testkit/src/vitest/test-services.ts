import { execFile } from "node:child_process";
import { promisify } from "node:util";

export interface TestServices {
  redisUrl: string;
  databaseUrl: string;
  stop: () => Promise<void>;
}

const run = promisify(execFile);

async function dockerAnswers(): Promise<boolean> {
  try {
    await run("docker", ["info", "--format", "{{.ServerVersion}}"], { timeout: 5_000 });
    return true;
  } catch {
    return false;
  }
}

const LOCAL_REDIS_URL = "redis://127.0.0.1:6379";
const LOCAL_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/test";

async function localServicesAnswer(): Promise<boolean> {
  const [redis, postgres] = await Promise.all([
    run("redis-cli", ["-u", LOCAL_REDIS_URL, "ping"], { timeout: 3_000 }).then(
      (r) => r.stdout.trim() === "PONG",
      () => false,
    ),
    run("pg_isready", ["-d", LOCAL_DATABASE_URL], { timeout: 3_000 }).then(
      () => true,
      () => false,
    ),
  ]);
  return redis && postgres;
}

/**
 * REDIS_URL / DATABASE_URL win. Without them, a machine with a Docker engine gets throwaway
 * containers; otherwise local servers on the default ports are used when they answer, and a
 * machine with neither is told exactly what to set.
 */
export async function resolveTestServices(env: NodeJS.ProcessEnv): Promise<TestServices> {
  let redisUrl = env.REDIS_URL;
  let databaseUrl = env.DATABASE_URL;
  const stops: Array<() => Promise<unknown>> = [];
  if ((!redisUrl || !databaseUrl) && !(await dockerAnswers())) {
    if (await localServicesAnswer()) {
      redisUrl ??= LOCAL_REDIS_URL;
      databaseUrl ??= LOCAL_DATABASE_URL;
    } else {
      throw new Error(
        "Tests need Redis and Postgres: set REDIS_URL and DATABASE_URL " +
          `(e.g. ${LOCAL_REDIS_URL} and ${LOCAL_DATABASE_URL}), ` +
          "or run them on a machine with a Docker engine so testcontainers can start them.",
      );
    }
  }
  if (!redisUrl) {
    const { RedisContainer } = await import("@testcontainers/redis");
    const redis = await new RedisContainer("redis:7-alpine").start();
    stops.push(() => redis.stop());
    redisUrl = redis.getConnectionUrl();
  }
  if (!databaseUrl) {
    const { PostgreSqlContainer } = await import("@testcontainers/postgresql");
    const pg = await new PostgreSqlContainer("postgres:16-alpine").start();
    stops.push(() => pg.stop());
    databaseUrl = pg.getConnectionUri();
  }
  return {
    redisUrl,
    databaseUrl,
    stop: async () => {
      await Promise.all(stops.map((stop) => stop()));
    },
  };
}
