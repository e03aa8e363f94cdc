import {
  BUDGET_CALLBACK_ACTIONS,
  DRAFT_CALLBACK_ACTIONS,
  formatCallbackData,
  type CallbackAction,
} from "@ratatoskr/contracts";
import { buttonLabel, type Locale } from "../i18n/index.ts";
import type { InlineKeyboard } from "../telegram/index.ts";

function keyboard(locale: Locale, taskId: number, actions: readonly CallbackAction[]): InlineKeyboard {
  return {
    inline_keyboard: [
      actions.map((action) => ({
        text: buttonLabel(locale, action),
        callback_data: formatCallbackData({ action, taskId }),
      })),
    ],
  };
}

/**
 * Approve / Edit / Cancel under a draft (T7). The callback data format lives in
 * `@ratatoskr/contracts` (telegram-callback.ts) because ingress parses what this writes.
 */
export function draftKeyboard(locale: Locale, taskId: number): InlineKeyboard {
  return keyboard(locale, taskId, DRAFT_CALLBACK_ACTIONS);
}

/** Continue (+budget) / Stop under a budget stop (P5). */
export function budgetKeyboard(locale: Locale, taskId: number): InlineKeyboard {
  return keyboard(locale, taskId, BUDGET_CALLBACK_ACTIONS);
}
