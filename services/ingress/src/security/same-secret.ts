import { timingSafeEqual } from "node:crypto";

/**
 * Compares a presented secret with the expected one in constant time. The length check comes
 * first because timingSafeEqual throws on different lengths; it only reveals the length.
 */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
