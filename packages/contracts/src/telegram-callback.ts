/**
 * `callback_data` of the bot's inline buttons: Approve / Edit / Cancel under a draft (T7) and
 * Continue (+budget) / Stop under a budget stop (P5). The notifier writes it, ingress reads it
 * back when a button is pressed; both sides use these two functions so the format lives in one
 * place. Telegram limits callback data to 64 bytes; `more-budget:2147483647` is 22.
 */
export const DRAFT_CALLBACK_ACTIONS = ["approve", "edit", "cancel"] as const;
export const BUDGET_CALLBACK_ACTIONS = ["more-budget", "stop"] as const;
export const CALLBACK_ACTIONS = [...DRAFT_CALLBACK_ACTIONS, ...BUDGET_CALLBACK_ACTIONS] as const;

export type CallbackAction = (typeof CALLBACK_ACTIONS)[number];

export interface CallbackData {
  action: CallbackAction;
  /** The task the button belongs to (not necessarily the chat's active one). */
  taskId: number;
}

const CALLBACK_PATTERN = new RegExp(`^(${CALLBACK_ACTIONS.join("|")}):([1-9]\\d{0,15})$`);

/** Task ids are Postgres `integer`s: a larger number in a button cannot name a task. */
const MAX_TASK_ID = 2_147_483_647;

/** `{ action: "approve", taskId: 12 }` → `"approve:12"`. */
export function formatCallbackData({ action, taskId }: CallbackData): string {
  if (!Number.isSafeInteger(taskId) || taskId <= 0)
    throw new Error(`callback task id must be a positive integer, got ${taskId}`);
  return `${action}:${taskId}`;
}

/** The inverse of formatCallbackData; null for anything else (stale or foreign buttons). */
export function parseCallbackData(data: string): CallbackData | null {
  const match = CALLBACK_PATTERN.exec(data);
  if (!match) return null;
  const taskId = Number(match[2]);
  if (!Number.isSafeInteger(taskId) || taskId > MAX_TASK_ID) return null;
  return { action: match[1] as CallbackAction, taskId };
}
