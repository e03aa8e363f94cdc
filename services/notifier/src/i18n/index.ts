export { render, buttonLabel } from "./render.ts";
export {
  LOCALES,
  TEMPLATE_IDS,
  type Locale,
  type TemplateId,
  type TemplateParams,
  type TraceLine,
  type LiveLine,
  type ServiceVersion,
  type AnalystProblem,
} from "./template-params.ts";
export { localeFormat, type LocaleFormat, type PluralForms } from "./locale-format.ts";
