/** The longest slug in a task branch name, in characters. */
const MAX_SLUG = 40;

const CYRILLIC: Record<string, string> = {
  а: "a", б: "b", в: "v", г: "g", д: "d", е: "e", ё: "e", ж: "zh", з: "z", и: "i", й: "y", к: "k",
  л: "l", м: "m", н: "n", о: "o", п: "p", р: "r", с: "s", т: "t", у: "u", ф: "f", х: "h", ц: "ts",
  ч: "ch", ш: "sh", щ: "sch", ъ: "", ы: "y", ь: "", э: "e", ю: "yu", я: "ya",
};

/** ASCII slug of a title: lower case, Cyrillic transliterated, `-` between words, ≤ 40 chars. */
export function slugify(title: string): string {
  const ascii = [...title.toLowerCase().normalize("NFKD")]
    .map((ch) => CYRILLIC[ch] ?? ch)
    .join("")
    .replace(/[\u0300-\u036f]/g, "");
  const slug = ascii
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, MAX_SLUG)
    .replace(/-+$/, "");
  return slug === "" ? "task" : slug;
}

/** `ratatoskr/<taskId>-<slug>`: unique per task, readable, always a valid git ref name. */
export function branchName(taskId: number, title: string): string {
  if (!Number.isSafeInteger(taskId) || taskId <= 0) throw new RangeError(`task id must be a positive integer, got ${taskId}`);
  return `ratatoskr/${taskId}-${slugify(title)}`;
}

/**
 * The line that ends every commit of a round: `ratatoskr task #42, round 2` (a Gitea command says
 * `command`). A retry finds the round's pushed work by it.
 */
export function roundTrailer(input: { taskId: number; round: number; noun?: "task" | "command" }): string {
  return `ratatoskr ${input.noun ?? "task"} #${input.taskId}, round ${input.round}`;
}

/** Commit message from the task title and round: `<title>`, a blank line, the {@link roundTrailer}. */
export function commitMessage(input: { taskId: number; title: string; round: number; noun?: "task" | "command" }): string {
  const subject = input.title.replace(/\s+/g, " ").trim().slice(0, 72) || "Changes";
  return `${subject}\n\n${roundTrailer(input)}`;
}
