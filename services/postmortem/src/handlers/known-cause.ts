import { doorTexts, KNOWN_FAILURE_CAUSES, type DoorLanguage, type KnownFailureCause, type TaskSource } from "@ratatoskr/contracts";
import type { PostmortemNotice } from "../notify/postmortem-notice.ts";

type Language = DoorLanguage;

interface Explanation {
  why: string;
  /** `thenRetry`: how the person's door asks again, in their language. */
  whatToDo: (thenRetry: string) => string;
}

/** Plain explanations of the failures whose cause is certain: no model is asked (P6). */
const EXPLANATIONS: Record<Language, Record<KnownFailureCause, Explanation>> = {
  en: {
    "repo-not-found": {
      why: "The repository could not be found on the git host: its name is wrong, or the bot's account cannot see it.",
      whatToDo: (thenRetry) => `Check the repository's name and give the bot's account access to it, ${thenRetry}.`,
    },
    "auth-refused": {
      why: "The git host refused the bot's credentials, so the work could not be fetched or pushed.",
      whatToDo: (thenRetry) => `Ask the operator to renew the bot's token or its access to the repository, ${thenRetry}.`,
    },
    "push-rejected": {
      why: "The push was refused because someone else pushed to the branch meanwhile; Ratatoskr never force-pushes over other work.",
      whatToDo: (thenRetry) => `Look at what was pushed to the branch and merge or drop it, ${thenRetry}.`,
    },
    "refs-moved": {
      why: "During the agent's run, refs other than the task's branch changed on the git host. Only Ratatoskr pushes, and only the task's branch, so the task was stopped instead of reported as done.",
      whatToDo: () => "Check who changed those refs and restore them if it was not a person; the failure message names each one.",
    },
  },
  ru: {
    "repo-not-found": {
      why: "Репозиторий не найден на git-сервере: имя указано неверно или у бота нет к нему доступа.",
      whatToDo: (thenRetry) => `Проверьте имя репозитория и дайте боту доступ к нему, ${thenRetry}.`,
    },
    "auth-refused": {
      why: "Git-сервер не принял учётные данные бота, поэтому работу нельзя было получить или отправить.",
      whatToDo: (thenRetry) => `Попросите администратора обновить токен бота или его доступ к репозиторию, ${thenRetry}.`,
    },
    "push-rejected": {
      why: "Push отклонён: за это время кто-то другой отправил изменения в ветку, а Ratatoskr никогда не перезаписывает чужую работу.",
      whatToDo: (thenRetry) => `Посмотрите, что появилось в ветке, объедините или уберите это, ${thenRetry}.`,
    },
    "refs-moved": {
      why: "Во время работы агента на git-сервере изменились ссылки помимо ветки задачи. Отправляет изменения только Ratatoskr и только в ветку задачи, поэтому задача остановлена, а не отмечена как выполненная.",
      whatToDo: () => "Проверьте, кто изменил эти ссылки, и верните их, если это был не человек; сообщение об ошибке называет каждую.",
    },
  },
};

const KNOWN: ReadonlySet<string> = new Set(KNOWN_FAILURE_CAUSES);

/** The known cause a failure event recorded, if any. */
export function knownCauseOf(payload: unknown): KnownFailureCause | undefined {
  const cause = (payload as { cause?: unknown } | null)?.cause;
  return typeof cause === "string" && KNOWN.has(cause) ? (cause as KnownFailureCause) : undefined;
}

/** The postmortem of a failure with a known cause, in the person's language, for their door. */
export function knownCauseNotice(taskId: number, cause: KnownFailureCause, language: Language, source: TaskSource): PostmortemNotice {
  const explanation = EXPLANATIONS[language][cause];
  const whatToDo = explanation.whatToDo(doorTexts(source).thenRetry[language]);
  return { template: "task.postmortem", params: { taskId, cause: "failed", why: explanation.why, whatToDo } };
}
