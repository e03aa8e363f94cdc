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

type Headers = Record<string, string | string[] | undefined>;

/** What a delivery says about itself: the event, its id and its signature. */
export interface DeliveryHeaders {
  event: string | undefined;
  deliveryId: string | undefined;
  signature: string | undefined;
}

/**
 * Gitea's `X-Gitea-*` headers, or Forgejo's `X-Forgejo-*` (Forgejo sends both, with the same
 * values: services/webhook/shared/payloader.go AddDefaultHeaders; the signature is the same
 * HMAC-SHA256 hex of the body). The first present header of each pair counts.
 */
export function deliveryHeaders(headers: Headers): DeliveryHeaders {
  const first = (...names: string[]) => {
    for (const name of names) {
      const value = headers[name];
      if (typeof value === "string") return value;
    }
    return undefined;
  };
  return {
    event: first("x-gitea-event", "x-forgejo-event"),
    deliveryId: first("x-gitea-delivery", "x-forgejo-delivery"),
    signature: first("x-gitea-signature", "x-forgejo-signature"),
  };
}
