import type { TelegramStatus } from "@ratatoskr/contracts";
import type { Catalog } from "./catalog.types.ts";
import type { AnalystProblem } from "./template-params.ts";

const COMMANDS = [
  "/start — новая задача",
  "/cancel — отменить текущую задачу",
  "/skip — хватит вопросов, сразу черновик",
  "/retry N — перезапустить задачу N",
  "/status N — статус задачи N",
  "/status — версии запущенных сервисов",
  "/continue N — продолжить задачу N с сохранённой сессии агента",
  "/attach N — как подключиться к живой сессии агента задачи N",
  "/help — эта справка",
].join("\n");

/** Feminine predicate forms: they read well both after «Статус:» and in «она …» (задача). */
const STATUS: Record<TelegramStatus, string> = {
  draft: "черновик",
  collecting: "уточняется",
  ready: "ждёт утверждения",
  approved: "утверждена",
  running: "в работе",
  paused: "приостановлена: бюджет исчерпан",
  success: "выполнена",
  failed: "не удалась",
  timeout: "остановлена по тайм-ауту",
  cancelled: "отменена",
  aborted: "закрыта как не относящаяся к коду",
};

const ANALYST_PROBLEM: Record<AnalystProblem, string> = {
  "no-verdict": "он вообще ничего не вернул",
  "invalid-json": "ответ не является корректным JSON",
  "no-phase": "в ответе нет фазы",
  "unknown-phase": "в ответе неизвестная фаза",
  "invalid-fields": "поля черновика в ответе заполнены неверно",
  timeout: "он не ответил вовремя",
  unavailable: "сервер агентов недоступен",
  "provider-refused": "провайдер модели отказал в запросе",
  "server-misconfigured": "сервер агентов устарел или настроен неверно (нужен администратор)",
  "worker-died": "процесс, выполнявший анализ, снова и снова падал (убит или упал)",
  internal: "сбой на нашей стороне (дело не в вашем сообщении)",
};

const bullets = (items: string[]): string => items.map((item) => `• ${item}`).join("\n");

export const RU: Catalog = {
  "bot.greeting": ({ taskId }) =>
    `👋 Открыта задача <b>#${taskId}</b>.\n` +
    "Расскажите, что нужно сделать: в каком репозитории, что изменить и зачем. " +
    "Я задам пару уточняющих вопросов и покажу черновик на утверждение.\n\n" +
    "/skip — сразу к черновику, /cancel — отменить задачу, /help — все команды.",
  "bot.help": () => `<b>Команды</b>\n${COMMANDS}`,
  "bot.unknown-command": ({ command }) =>
    `Не знаю команду <code>${command}</code>. Вот что я умею:\n${COMMANDS}`,
  "bot.task-number-needed": ({ command, given }) =>
    given === null
      ? `Команде /${command} нужен номер задачи, например: <code>/${command} 12</code>.`
      : `«${given}» — не номер задачи. Пример: <code>/${command} 12</code>.`,
  "bot.not-allowed": () => "Извините, этот бот работает только для своих владельцев. Сообщение не принято.",
  "bot.text-only": () => "Я читаю только текст, напишите, пожалуйста, словами (подпись к фото тоже подойдёт).",
  "bot.versions": ({ services }) =>
    services.length === 0
      ? "Ни один сервис пока не сообщил свою версию."
      : `<b>Версии сервисов</b>\n${bullets(services.map((s) => `${s.name} — <code>${s.version}</code>`))}`,
  "bot.attach": ({ taskId, serverUrl, sessionId }) =>
    `Чтобы наблюдать за живой сессией агента задачи <b>#${taskId}</b>, выполните:\n` +
    `<code>opencode attach ${serverUrl} --session ${sessionId}</code>`,
  "bot.attach-none": ({ taskId, status }) =>
    `У задачи #${taskId} сейчас нет живого запуска агента: она ${STATUS[status]}. Запуски — /status ${taskId}.`,
  "bot.nothing-to-cancel": () => "Активной задачи нет — отменять нечего.",
  "button.approve": () => "✅ Утвердить",
  "button.edit": () => "✏️ Изменить",
  "button.cancel": () => "✖️ Отменить",
  "button.more-budget": () => "➕ Продолжить (+бюджет)",
  "button.stop": () => "⏹ Остановить",
  "task.not-found": ({ taskId }) => `Задачи #${taskId} нет.`,
  "task.questions": ({ taskId, questions }) =>
    `Задача <b>#${taskId}</b> — несколько вопросов:\n` +
    `${questions.map((q, i) => `${i + 1}. ${q}`).join("\n")}\n\n` +
    "Ответьте одним сообщением или отправьте /skip, чтобы сразу получить черновик.",
  "task.draft-ready": ({ taskId, title, goal, repos, why, acceptanceCriteria }) =>
    `📝 Черновик задачи <b>#${taskId}</b>\n\n` +
    `<b>Название:</b> ${title}\n<b>Цель:</b> ${goal}\n<b>Репозитории:</b> ${repos.join(", ")}\n<b>Зачем:</b> ${why}\n` +
    `<b>Критерии приёмки:</b>\n${bullets(acceptanceCriteria)}\n\n` +
    "Утвердите (можно словом «создавай») или напишите, что поправить.",
  "task.edit-prompt": ({ taskId }) => `Напишите, что поправить в черновике задачи #${taskId}.`,
  "task.repo-not-found": ({ taskId, missing }) =>
    `Задача #${taskId}: не нашёл ${missing.length === 1 ? "репозиторий" : "репозитории"} ` +
    `${missing.map((r) => `<code>${r}</code>`).join(", ")}. В каком репозитории работать? Пришлите его в виде <code>owner/name</code>.`,
  "task.turn-limit": ({ taskId, maxTurns }, f) =>
    `Задача #${taskId}: уже ${f.count(maxTurns, { one: "раунд", few: "раунда", many: "раундов", other: "раунда" })} ` +
    "уточнений — больше я не спрашиваю. Отправьте /skip, и я соберу черновик из того, что известно, или /cancel, чтобы отменить задачу.",
  "task.approved": ({ taskId }) =>
    `✅ Задача <b>#${taskId}</b> утверждена. Агент-разработчик приступает к работе, следить за ходом — /status ${taskId}.`,
  "task.already-approved": ({ taskId }) =>
    `Задача #${taskId} уже утверждена и в работе, менять её поздно. Следите за ходом: /status ${taskId}.`,
  "task.cancelled": ({ taskId }) => `Задача #${taskId} отменена.`,
  "task.aborted": ({ taskId, reason }) =>
    `Задача #${taskId} закрыта: это не похоже на задачу по коду.\nПричина: ${reason}\nНачать заново — /start.`,
  "task.retry-refused": ({ taskId, status }) =>
    `Задачу #${taskId} нельзя перезапустить: она ${STATUS[status]}. Начните новую — /start.`,
  "task.retried": ({ taskId }) => `🔁 Задача #${taskId} перезапущена.`,
  "task.continued": ({ taskId }) => `▶️ Задача #${taskId} продолжается с сохранённой сессии агента.`,
  "task.status": (
    { taskId, status, title, repos, round, maxRounds, branch, traces, live, totalTokens, totalCostUsd, budgetUsd },
    f,
  ) => {
    const runs = traces.map(
      (t) =>
        `${t.agent} — ${t.outcome}, ${f.duration(t.durationMs)}, ` +
        `${f.count(t.tokens, { one: "токен", few: "токена", many: "токенов", other: "токена" })}, ${f.costUsd(t.costUsd)}`,
    );
    const now =
      live === null
        ? ""
        : `Сейчас: ${live.stage}${live.round === null ? "" : `, раунд ${live.round}`}, последний инструмент ${live.lastTool ?? "—"}\n` +
          `Смотреть: <code>opencode attach ${live.serverUrl} --session ${live.sessionId}</code>\n`;
    return (
      `<b>Задача #${taskId}</b> — ${title}\nСтатус: ${STATUS[status]}\nРепозитории: ${repos.join(", ") || "—"}\n` +
      `Ветка: ${branch === null ? "—" : `<code>${branch}</code>`}\nРаунд: ${round} из ${maxRounds}\n${now}\n` +
      (runs.length === 0 ? "Агенты ещё не запускались." : `<b>Последние запуски</b>\n${bullets(runs)}`) +
      `\n\nВсего: ${f.count(totalTokens, { one: "токен", few: "токена", many: "токенов", other: "токена" })}, ` +
      f.costUsd(totalCostUsd) +
      (budgetUsd === null ? "" : ` из бюджета ${f.costUsd(budgetUsd)}`)
    );
  },
  "task.running": ({ taskId }) => `⚙️ Задача #${taskId}: агент-разработчик взялся за работу.`,
  "task.dev-to-review": ({ taskId, round }) =>
    `🔍 Задача #${taskId}, раунд ${round}: изменения запушены, ревьюер их проверяет.`,
  "task.review-to-dev": ({ taskId, round, findings }, f) =>
    `↩️ Задача #${taskId}, раунд ${round}: у ревьюера ` +
    `${f.count(findings, { one: "замечание", few: "замечания", many: "замечаний", other: "замечания" })}, разработчик их исправляет.`,
  "task.success": ({ taskId, branch, commit, prUrl }) =>
    `🎉 Задача #${taskId} выполнена: ревьюер принял изменения.\nВетка: <code>${branch}</code>` +
    (commit ? `\nКоммит: <code>${commit}</code>` : "") +
    (prUrl ? `\nPull request: <a href="${prUrl}">${prUrl}</a>` : ""),
  "task.failed": ({ taskId, reason, findings }) =>
    `❌ Задача #${taskId} не удалась.\nПричина: ${reason}\n` +
    (findings.length > 0 ? `<b>Оставшиеся замечания:</b>\n${bullets(findings)}\n` : "") +
    "Скоро пришлю разбор, что пошло не так.",
  "task.timeout": ({ taskId }) =>
    `⏱ Задача #${taskId} не уложилась во время. Сделанное закоммичено и запушено, сессия агента сохранена — ` +
    `/continue ${taskId} продолжит с того же места.`,
  "task.postmortem": ({ taskId, cause, why, whatToDo }) =>
    `🔍 Разбор задачи #${taskId} (после ${cause === "failed" ? "сбоя" : "тайм-аута"})\n` +
    `<b>Почему так вышло:</b> ${why}\n<b>Что сделать:</b> ${whatToDo}`,
  "task.postmortem-unavailable": ({ taskId, reason }) =>
    `🔍 Задача #${taskId}: разбора не будет — ${reason ?? "агент разбора не смог закончить"}. ` +
    `Запуски — /status ${taskId}, запустить задачу заново — /retry ${taskId}.`,
  "task.budget-exceeded": ({ taskId, spentUsd, budgetUsd }, f) =>
    `💰 Задача #${taskId} приостановлена: потрачено ${f.costUsd(spentUsd)}, больше бюджета ${f.costUsd(budgetUsd)}. ` +
    "Следующий запуск агента ждёт вашего решения: «Продолжить» даёт ещё один бюджет, «Остановить» завершает задачу (запушенное остаётся).",
  "task.budget-extended": ({ taskId, budgetUsd }, f) =>
    `▶️ Задача #${taskId} продолжается с бюджетом ${f.costUsd(budgetUsd)}.`,
  "task.not-paused": ({ taskId, status }) =>
    `Задача #${taskId} уже не ждёт решения о бюджете: она ${STATUS[status]}.`,
  "task.analyst-error": ({ taskId, problem, then }) =>
    `⚠️ Задача #${taskId}: анализ не удался — ${ANALYST_PROBLEM[problem]}. ` +
    (then === "retrying"
      ? "Анализирую ваше сообщение заново, делать ничего не нужно."
      : "Отправьте сообщение ещё раз или /skip, чтобы собрать черновик из того, что есть."),
};
