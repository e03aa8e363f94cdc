import type { Locale } from "@ratatoskr/notifier";
import { BOT_COMMANDS, type BotCommandName } from "./parsing/command-parser.ts";
import type { BotCommandEntry } from "./telegram-bot-api.ts";

/** The menu Telegram shows next to the input field (setMyCommands); plain text, ≤ 256 chars. */
const MENU: Record<Locale, Record<BotCommandName, string>> = {
  en: {
    start: "Start a new task",
    cancel: "Cancel the current task",
    skip: "Stop the questions and draft the task now",
    retry: "Run task N again: /retry N",
    status: "Status of task N, or service versions without N",
    continue: "Resume task N from its saved agent session",
    attach: "How to watch the live agent session of task N",
    help: "All commands",
  },
  ru: {
    start: "Новая задача",
    cancel: "Отменить текущую задачу",
    skip: "Хватит вопросов — составить черновик сейчас",
    retry: "Перезапустить задачу N: /retry N",
    status: "Статус задачи N, без N — версии сервисов",
    continue: "Продолжить задачу N из сохранённой сессии агента",
    attach: "Как подключиться к живой сессии агента задачи N",
    help: "Все команды",
  },
};

export function commandMenu(locale: Locale): BotCommandEntry[] {
  return BOT_COMMANDS.map((command) => ({ command, description: MENU[locale][command] }));
}
