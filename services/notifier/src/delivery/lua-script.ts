import { createHash } from "node:crypto";
import type { Redis } from "@ratatoskr/runtime";

/** Runs a Lua script by its digest (EVALSHA): the source crosses the wire only when Redis lacks it. */
export type LuaScript = (redis: Redis, keys: readonly string[], args: readonly string[]) => Promise<unknown>;

export function luaScript(source: string): LuaScript {
  const sha = createHash("sha1").update(source).digest("hex");
  return async (redis, keys, args) => {
    try {
      return await redis.evalsha(sha, keys.length, ...keys, ...args);
    } catch (err) {
      // Not cached yet (a fresh or restarted Redis): EVAL runs it and caches it for the next call.
      if (!(err instanceof Error) || !err.message.startsWith("NOSCRIPT")) throw err;
      return redis.eval(source, keys.length, ...keys, ...args);
    }
  };
}
