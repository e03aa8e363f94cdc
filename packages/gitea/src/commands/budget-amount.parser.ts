/**
 * The amount of `/agent continue [+USD]`: `+2`, `2`, `$2.50`, `+$0.5` (a comma works as the
 * decimal point). Empty: no amount given. An amount must be a positive number of dollars.
 */
export function parseBudgetIncrement(message: string): { ok: true; usd: number | undefined } | { ok: false; given: string } {
  const given = message.split("\n", 1)[0]?.trim() ?? "";
  if (given === "") return { ok: true, usd: undefined };
  const match = /^\+?\s*\$?\s*(\d+(?:[.,]\d+)?)\s*(?:usd|\$)?$/i.exec(given);
  const usd = match ? Number(match[1]!.replace(",", ".")) : NaN;
  return Number.isFinite(usd) && usd > 0 ? { ok: true, usd } : { ok: false, given };
}
