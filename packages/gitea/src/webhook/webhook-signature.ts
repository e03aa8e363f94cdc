import { createHmac, timingSafeEqual } from "node:crypto";

/** HMAC-SHA256 of the raw body as lowercase hex: what Gitea puts in `X-Gitea-Signature`. */
export function signBody(rawBody: Buffer | string, secret: string): string {
  return createHmac("sha256", secret).update(rawBody).digest("hex");
}

/**
 * Whether `X-Gitea-Signature` matches the raw bytes Gitea sent (never re-serialised JSON).
 * Absent, empty or malformed headers fail. The comparison is constant-time after a length check
 * (timingSafeEqual needs equal lengths; the length of a hex digest is public anyway).
 */
export function verifySignature(
  rawBody: Buffer,
  header: string | string[] | undefined,
  secret: string,
): boolean {
  if (typeof header !== "string" || !/^[0-9a-fA-F]{64}$/.test(header)) return false;
  const given = Buffer.from(header.toLowerCase(), "hex");
  const expected = createHmac("sha256", secret).update(rawBody).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}
