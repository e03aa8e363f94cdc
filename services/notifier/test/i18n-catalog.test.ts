import { parseTelegramHtml } from "@ratatoskr/testkit";
import { describe, expect, it } from "vitest";
import { buttonLabel, LOCALES, render, TEMPLATE_IDS, type TemplateId } from "../src/i18n/index.ts";
import { EN } from "../src/i18n/messages.en.ts";
import { RU } from "../src/i18n/messages.ru.ts";
import { SAMPLES } from "./support/template-samples.ts";

/** A different valid value for each enum-like param, so changing it must change the text. */
const ALTERNATIVE: Record<string, unknown> = {
  status: "cancelled",
  cause: "timeout",
  problem: "timeout",
  given: null,
};

/** Every way to change one leaf of the params: strings and numbers grow, enums switch. */
function* variations(value: unknown, key = ""): Generator<unknown> {
  if (key in ALTERNATIVE) yield ALTERNATIVE[key];
  else if (typeof value === "string") yield `${value}Zq`;
  else if (typeof value === "number") yield value * 10 + 7;
  else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      for (const changed of variations(value[i])) yield value.map((item, j) => (j === i ? changed : item));
    }
  } else if (value !== null && typeof value === "object") {
    for (const [k, inner] of Object.entries(value)) {
      for (const changed of variations(inner, k)) yield { ...value, [k]: changed };
    }
  }
}

const renderAny = (locale: "ru" | "en", id: TemplateId, params: unknown): string =>
  render(locale, id, params as never);

describe("message catalogue", () => {
  it("has every template in both locales and nothing else", () => {
    const ids = [...TEMPLATE_IDS].sort();
    expect(Object.keys(RU).sort()).toEqual(ids);
    expect(Object.keys(EN).sort()).toEqual(ids);
    expect(Object.keys(SAMPLES).sort()).toEqual(ids);
  });

  it("uses every param in both locales: changing any of them changes the text", () => {
    const unused: string[] = [];
    for (const id of TEMPLATE_IDS) {
      for (const locale of LOCALES) {
        const base = renderAny(locale, id, SAMPLES[id]);
        for (const changed of variations(SAMPLES[id])) {
          if (renderAny(locale, id, changed) === base)
            unused.push(`${locale} ${id} ${JSON.stringify(changed)}`);
        }
      }
    }
    expect(unused).toEqual([]);
  });

  it("renders valid Telegram HTML with no placeholder leaks, Russian in ru and English in en", () => {
    for (const id of TEMPLATE_IDS) {
      for (const locale of LOCALES) {
        const html = renderAny(locale, id, SAMPLES[id]);
        const parsed = parseTelegramHtml(html);
        expect(parsed.ok, `${locale} ${id}: ${html}`).toBe(true);
        expect(html).not.toMatch(/undefined|null|NaN|\[object/);
        if (!id.startsWith("button.") && id !== "bot.help") {
          expect(/[а-яё]/i.test(html), `${locale} ${id}`).toBe(locale === "ru");
        }
      }
    }
  });

  it("escapes params so user text can neither break nor inject markup", () => {
    const hostile = `<b>bold</b> & "quoted" <a href="x">`;
    for (const locale of LOCALES) {
      const html = render(locale, "task.aborted", { taskId: 1, reason: hostile });
      const parsed = parseTelegramHtml(html);
      expect(parsed.ok && parsed.text).toContain(hostile);
      expect(parsed.ok && parsed.entities.filter((e) => e.type === "bold")).toEqual([]);
      const link = render(locale, "task.success", {
        taskId: 1,
        branch: "b",
        commit: null,
        prUrl: `https://x.test/?a=1&b="2"`,
      });
      const linkParsed = parseTelegramHtml(link);
      expect(linkParsed.ok && linkParsed.entities.find((e) => e.type === "text_link")?.url).toBe(
        `https://x.test/?a=1&b="2"`,
      );
    }
  });

  it("lists every T1 command in the help and after an unknown command", () => {
    const commands = [
      "/start",
      "/cancel",
      "/skip",
      "/retry N",
      "/status N",
      "/status",
      "/continue N",
      "/attach N",
      "/help",
    ];
    for (const locale of LOCALES) {
      for (const text of [
        render(locale, "bot.help", {}),
        render(locale, "bot.unknown-command", { command: "/x" }),
      ]) {
        for (const command of commands) expect(text).toContain(`${command} — `);
      }
    }
  });

  it("asks for a task number both when it is missing and when it is not a number", () => {
    expect(render("en", "bot.task-number-needed", { command: "status", given: null })).toBe(
      "/status needs a task number, e.g. <code>/status 12</code>.",
    );
    expect(render("ru", "bot.task-number-needed", { command: "retry", given: "x<y" })).toBe(
      "«x&lt;y» — не номер задачи. Пример: <code>/retry 12</code>.",
    );
  });

  it("uses Russian plural forms and locale number formats", () => {
    const remarks = (findings: number) =>
      render("ru", "task.review-to-dev", { taskId: 1, round: 1, findings });
    expect(remarks(1)).toContain("1 замечание,");
    expect(remarks(3)).toContain("3 замечания,");
    expect(remarks(5)).toContain("5 замечаний,");
    expect(remarks(21)).toContain("21 замечание,");
    const status = render("en", "task.status", SAMPLES["task.status"]);
    expect(status).toContain("dev — succeeded, 5 min 5 s, 12,345 tokens, $0.12");
    expect(status).toContain("Now: dev, round 2, last tool edit\nWatch it: <code>opencode attach http://127.0.0.1:4096 --session ses_12</code>");
    expect(render("en", "task.status", { ...SAMPLES["task.status"], live: null })).not.toContain("Now:");
    expect(render("en", "task.review-to-dev", { taskId: 1, round: 1, findings: 1 })).toContain("1 remark;");
  });

  it("numbers the analyst's questions and shows the draft's criteria as a list", () => {
    expect(render("en", "task.questions", SAMPLES["task.questions"])).toContain(
      "1. Which repository?\n2. Any deadline?",
    );
    expect(render("ru", "task.draft-ready", SAMPLES["task.draft-ready"])).toContain(
      "<b>Критерии приёмки:</b>\n• Export button exists\n• CSV opens in Excel",
    );
  });

  it("gives plain button labels per locale", () => {
    expect(["approve", "edit", "cancel"].map((b) => buttonLabel("en", b as "approve"))).toEqual([
      "✅ Approve",
      "✏️ Edit",
      "✖️ Cancel",
    ]);
    expect(buttonLabel("ru", "approve")).toBe("✅ Утвердить");
  });

  it("leaves the pull request line out when there is none", () => {
    for (const locale of LOCALES) {
      const text = render(locale, "task.success", {
        taskId: 3,
        branch: "ratatoskr/task-3",
        commit: null,
        prUrl: null,
      });
      expect(text).not.toMatch(/Pull request|null/);
      expect(text).toContain("<code>ratatoskr/task-3</code>");
    }
  });
});
