import { createHash, timingSafeEqual } from "node:crypto";

const digest = (value: string): Buffer => createHash("sha256").update(value, "utf8").digest();

/**
 * Compares a presented secret with the expected one in constant time. Both are reduced to
 * fixed-length digests first, so neither the comparison's time nor an early length check tells
 * anything about the expected secret, not even its length.
 */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/** `sameSecret` against one expected secret, its digest computed once (a per-request check). */
export function secretMatcher(expected: string): (given: string) => boolean {
  const want = digest(expected);
  return (given) => timingSafeEqual(digest(given), want);
}
