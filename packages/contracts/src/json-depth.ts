/**
 * How deep parsed input may nest before it is refused. Nothing Ratatoskr reads from outside
 * (Telegram updates, Gitea payloads and answers, opencode answers, job payloads) nests beyond
 * about a dozen levels; JSON.parse has no limit, but anything that recurses over the value
 * afterwards (JSON.stringify, a schema walk, a log serializer) overflows the stack at a few
 * thousand — on every retry of the same input.
 */
export const MAX_INPUT_DEPTH = 64;

/**
 * Whether `value` nests arrays or objects deeper than `maxDepth` (a scalar is depth 0, `[]` and
 * `{}` depth 1). Walks with its own stack, so it never overflows however deep the input is, and
 * stops at the first branch past the limit.
 */
export function nestedDeeperThan(value: unknown, maxDepth: number = MAX_INPUT_DEPTH): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== "object") continue;
    if (depth + 1 > maxDepth) return true;
    const children = Array.isArray(item) ? item : Object.values(item as Record<string, unknown>);
    for (const child of children) if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * JSON text of `value`, or undefined when it nests deeper than `maxDepth` (JSON.stringify
 * recurses and would throw RangeError on such input).
 */
export function boundedStringify(value: unknown, maxDepth: number = MAX_INPUT_DEPTH): string | undefined {
  return nestedDeeperThan(value, maxDepth) ? undefined : JSON.stringify(value);
}
