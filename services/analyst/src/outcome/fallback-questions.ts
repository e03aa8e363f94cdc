/**
 * Questions the service itself asks when the verdict leaves the draft without usable
 * repositories. They go into the dialogue (the person sees them as the analyst's question), so
 * they follow the person's language as the analyst's own questions do.
 */
export type DialogueLanguage = "ru" | "en";

/** Russian when most letters the person wrote are Cyrillic, else English. */
export function dialogueLanguage(texts: readonly string[]): DialogueLanguage {
  const joined = texts.join(" ");
  const cyrillic = joined.match(/\p{Script=Cyrillic}/gu)?.length ?? 0;
  const latin = joined.match(/\p{Script=Latin}/gu)?.length ?? 0;
  return cyrillic > latin ? "ru" : "en";
}

export function whichRepositoryQuestion(language: DialogueLanguage): string {
  return language === "ru"
    ? "В каком репозитории нужно сделать изменения? Напишите его как owner/name."
    : "Which repository should the change be made in? Send it as owner/name.";
}

export function missingRepositoriesQuestion(language: DialogueLanguage, missing: readonly string[]): string {
  const names = missing.join(", ");
  if (language === "ru") {
    return `Не нахожу ${missing.length === 1 ? "репозиторий" : "репозитории"} ${names}. В каком репозитории работать? Напишите его как owner/name.`;
  }
  return `I can't find ${missing.length === 1 ? "the repository" : "the repositories"} ${names}. Which repository should I work in? Send it as owner/name.`;
}
