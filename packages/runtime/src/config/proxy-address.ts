import { isIP } from "node:net";

/** Ranges fastify's trustProxy (proxy-addr) knows by name. */
const NAMED_RANGES = ["loopback", "linklocal", "uniquelocal"];

/** An address or range a reverse proxy may be trusted by: `10.0.0.7`, `10.0.0.0/8`, `fd00::/8`, `loopback`. */
export function isProxyAddress(item: string): boolean {
  if (NAMED_RANGES.includes(item)) return true;
  const [address = "", bits, ...rest] = item.split("/");
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
}
