import { createHash } from "node:crypto";

/** Postgres keeps the first 63 bytes of a prepared statement's name (NAMEDATALEN - 1). */
const MAX_NAME_BYTES = 63;

const names = new Map<string, string>();

/**
 * The name of a prepared statement of one shape: `<kind>:<shape>` when it fits, else `<kind>#`
 * and a hash of the shape. Postgres would cut a longer name to 63 bytes, so two shapes that
 * differ only past that point would share one name, and the second to be prepared on a
 * connection would fail (pg also warns on every such query).
 */
export function statementName(kind: string, shape: string): string {
  const key = `${kind}:${shape}`;
  let name = names.get(key);
  if (name === undefined) {
    name =
      Buffer.byteLength(key) <= MAX_NAME_BYTES
        ? key
        : `${kind}#${createHash("sha256").update(shape).digest("hex")}`.slice(0, MAX_NAME_BYTES);
    names.set(key, name);
  }
  return name;
}
