import type { CallbackAction } from "@ratatoskr/contracts";
import { escapeHtml } from "../telegram/escape-html.ts";
import type { Catalog, Template } from "./catalog.types.ts";
import { localeFormat, type LocaleFormat } from "./locale-format.ts";
import { EN } from "./messages.en.ts";
import { RU } from "./messages.ru.ts";
import type { Locale, TemplateId, TemplateParams } from "./template-params.ts";

const CATALOGS: Readonly<Record<Locale, Catalog>> = { ru: RU, en: EN };
// Built on first use: Intl.NumberFormat reads ICU's number data out of node's binary, about 5 MB
// of resident pages that an idle process does not need (bench/rss.ts).
const FORMATS = new Map<Locale, LocaleFormat>();

function formatFor(locale: Locale): LocaleFormat {
  let format = FORMATS.get(locale);
  if (!format) {
    format = localeFormat(locale);
    FORMATS.set(locale, format);
  }
  return format;
}

/** Escapes every string inside the params, however deep, so no template can forget one. */
function escapeDeep<T>(value: T): T {
  if (typeof value === "string") return escapeHtml(value) as T;
  if (Array.isArray(value)) return value.map(escapeDeep) as T;
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, escapeDeep(inner)])) as T;
  }
  return value;
}

/**
 * The bot's text `templateId` in `locale`, as Telegram HTML (`parse_mode: "HTML"`). Params are
 * HTML-escaped here; the template's own markup is kept.
 */
export function render<K extends TemplateId>(
  locale: Locale,
  templateId: K,
  params: TemplateParams[K],
): string {
  const template = CATALOGS[locale][templateId] as Template<K>;
  return template(escapeDeep(params), formatFor(locale));
}

/** Button labels are plain text (no parse mode): rendered without markup to escape. */
export function buttonLabel(locale: Locale, button: CallbackAction): string {
  return CATALOGS[locale][`button.${button}`]({}, formatFor(locale));
}
