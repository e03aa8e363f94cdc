import { createRequire } from "node:module";
import type Pg from "pg";

/**
 * The pg module, loaded so that its import-time platform check stays cheap. At import pg asks
 * whether it runs in a Cloudflare Worker. It reads `navigator.userAgent` when there is one; Node 20
 * has no `navigator`, so pg builds a `Response` instead, and that loads Node's whole fetch stack
 * (its bundled undici, web streams, http2): about 5 MB resident and 2 MB of heap in every process
 * that talks to Postgres (bench/rss.ts). Node 21 and later define `navigator` themselves, with the
 * userAgent "Node.js/<major>"; for the synchronous require alone, Node 20 is lent the same answer.
 * Import pg's values from here, not from "pg", so this runs first.
 */
function loadPg(): typeof Pg {
  const require = createRequire(import.meta.url);
  if ("navigator" in globalThis) return require("pg") as typeof Pg;
  const userAgent = `Node.js/${process.versions.node.split(".")[0]}`;
  Object.defineProperty(globalThis, "navigator", { value: { userAgent }, configurable: true });
  try {
    return require("pg") as typeof Pg;
  } finally {
    delete (globalThis as { navigator?: unknown }).navigator;
  }
}

export const pgDriver = loadPg();
