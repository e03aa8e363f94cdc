import type { Locale } from "./template-params.ts";

/** Russian needs three plural forms (1 задача, 2 задачи, 5 задач); English two. */
export type PluralForms = { one: string; few?: string; many?: string; other: string };

/** Number, duration and plural formatting for one locale, handed to every template. */
export interface LocaleFormat {
  integer(n: number): string;
  /** `1 h 2 min`, `5 min 3 s`, `42 s`. */
  duration(ms: number): string;
  costUsd(usd: number): string;
  /** `n` followed by the right form of the word. */
  count(n: number, forms: PluralForms): string;
}

const UNITS: Record<Locale, { h: string; min: string; s: string }> = {
  en: { h: "h", min: "min", s: "s" },
  ru: { h: "ч", min: "мин", s: "с" },
};

export function localeFormat(locale: Locale): LocaleFormat {
  const integer = new Intl.NumberFormat(locale, { maximumFractionDigits: 0 });
  const cost = new Intl.NumberFormat(locale, {
    style: "currency",
    currency: "USD",
    maximumFractionDigits: 2,
  });
  // Under a cent, cents would read "$0.00 of a $0.00 budget": a cheap model's spend needs its digits.
  const smallCost = new Intl.NumberFormat(locale, { style: "currency", currency: "USD", maximumFractionDigits: 4 });
  const plural = new Intl.PluralRules(locale);
  const units = UNITS[locale];
  return {
    integer: (n) => integer.format(n),
    duration: (ms) => {
      const total = Math.round(ms / 1000);
      const [h, m, s] = [Math.floor(total / 3600), Math.floor((total % 3600) / 60), total % 60];
      if (h > 0) return `${h} ${units.h} ${m} ${units.min}`;
      if (m > 0) return `${m} ${units.min} ${s} ${units.s}`;
      return `${s} ${units.s}`;
    },
    costUsd: (usd) => (usd > 0 && usd < 0.01 ? smallCost : cost).format(usd),
    count: (n, forms) => {
      const rule = plural.select(n);
      const word =
        (rule === "one"
          ? forms.one
          : rule === "few"
            ? forms.few
            : rule === "many"
              ? forms.many
              : undefined) ?? forms.other;
      return `${integer.format(n)} ${word}`;
    },
  };
}
