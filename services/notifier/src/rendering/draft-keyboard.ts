import { CALLBACK_ACTIONS, formatCallbackData } from "@ratatoskr/contracts";
import { buttonLabel, type Locale } from "../i18n/index.ts";
import type { InlineKeyboard } from "../telegram/index.ts";

/**
 * Approve / Edit / Cancel under a draft (T7). The callback data format lives in
 * `@ratatoskr/contracts` (telegram-callback.ts) because ingress parses what this writes.
 */
export function draftKeyboard(locale: Locale, taskId: number): InlineKeyboard {
  return {
    inline_keyboard: [
      CALLBACK_ACTIONS.map((action) => ({
        text: buttonLabel(locale, action),
        callback_data: formatCallbackData({ action, taskId }),
      })),
    ],
  };
}
