import { KNOWN_FAILURE_CAUSES, type KnownFailureCause } from "@ratatoskr/contracts";
import type { PostmortemNotice } from "../notify/postmortem-notice.ts";

type Language = "en" | "ru";
type Door = "telegram" | "gitea";

interface Explanation {
  why: string;
  whatToDo: (door: Door) => string;
}

const again: Record<Language, Record<Door, string>> = {
  en: { telegram: "then /retry the task", gitea: "then comment the command again" },
  ru: { telegram: "затем повторите задачу командой /retry", gitea: "затем напишите команду ещё раз" },
};

/** Plain explanations of the failures whose cause is certain: no model is asked (P6). */
const EXPLANATIONS: Record<Language, Record<KnownFailureCause, Explanation>> = {
  en: {
    "repo-not-found": {
      why: "The repository could not be found on the git host: its name is wrong, or the bot's account cannot see it.",
      whatToDo: (door) => `Check the repository's name and give the bot's account access to it, ${again.en[door]}.`,
    },
    "auth-refused": {
      why: "The git host refused the bot's credentials, so the work could not be fetched or pushed.",
      whatToDo: (door) => `Ask the operator to renew the bot's token or its access to the repository, ${again.en[door]}.`,
    },
    "push-rejected": {
      why: "The push was refused because someone else pushed to the branch meanwhile; Ratatoskr never force-pushes over other work.",
      whatToDo: (door) => `Look at what was pushed to the branch and merge or drop it, ${again.en[door]}.`,
    },
    "refs-moved": {
      why: "During the agent's run, refs other than the task's branch changed on the git host. Only Ratatoskr pushes, and only the task's branch, so the task was stopped instead of reported as done.",
      whatToDo: () => "Check who changed those refs and restore them if it was not a person; the failure message names each one.",
    },
  },
  ru: {
    "repo-not-found": {
      why: "Репозиторий не найден на git-сервере: имя указано неверно или у бота нет к нему доступа.",
      whatToDo: (door) => `Проверьте имя репозитория и дайте боту доступ к нему, ${again.ru[door]}.`,
    },
    "auth-refused": {
      why: "Git-сервер не принял учётные данные бота, поэтому работу нельзя было получить или отправить.",
      whatToDo: (door) => `Попросите администратора обновить токен бота или его доступ к репозиторию, ${again.ru[door]}.`,
    },
    "push-rejected": {
      why: "Push отклонён: за это время кто-то другой отправил изменения в ветку, а Ratatoskr никогда не перезаписывает чужую работу.",
      whatToDo: (door) => `Посмотрите, что появилось в ветке, объедините или уберите это, ${again.ru[door]}.`,
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
export function knownCauseNotice(taskId: number, cause: KnownFailureCause, language: Language, door: Door): PostmortemNotice {
  const explanation = EXPLANATIONS[language][cause];
  return { template: "task.postmortem", params: { taskId, cause: "failed", why: explanation.why, whatToDo: explanation.whatToDo(door) } };
}
