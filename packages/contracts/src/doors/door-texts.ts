import type { TaskSource } from "../state-machine/task-status.ts";

export type DoorLanguage = "en" | "ru";

/**
 * What a door says outside its own notifier channel: how its person asks for a task again. The
 * pipeline's steps (a reason the sweep records, the postmortem's prompt and its plain
 * explanations) read these from the task's door and never branch on the door themselves, so a
 * new door adds one entry here, beside its ingress adapter and its notifier channel.
 */
export interface DoorTexts {
  /** How a failed task is run again, as a clause for a reason: "/retry 12 starts the task again". */
  retry(taskId: number): string;
  /** How a timed-out or paused task goes on in its own session: "/continue 12". */
  resume(taskId: number): string;
  /** "then retry", closing an instruction to the person, in their language. */
  thenRetry: Record<DoorLanguage, string>;
}

const DOORS: Record<TaskSource, DoorTexts> = {
  telegram: {
    retry: (taskId) => `/retry ${taskId} starts the task again`,
    resume: (taskId) => `/continue ${taskId}`,
    thenRetry: { en: "then /retry the task", ru: "затем повторите задачу командой /retry" },
  },
  gitea: {
    retry: () => "comment the command again on its issue or pull request to retry",
    resume: () => "`/agent continue` on its issue or pull request",
    thenRetry: { en: "then comment the command again", ru: "затем напишите команду ещё раз" },
  },
};

/** The texts of the door a task came through. */
export function doorTexts(source: TaskSource): DoorTexts {
  return DOORS[source];
}
