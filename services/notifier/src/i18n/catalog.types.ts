import type { LocaleFormat } from "./locale-format.ts";
import type { TemplateId, TemplateParams } from "./template-params.ts";

/** Renders one text from already HTML-escaped params. */
export type Template<K extends TemplateId> = (params: TemplateParams[K], format: LocaleFormat) => string;

/** All texts of one locale; a missing template is a compile error. */
export type Catalog = { readonly [K in TemplateId]: Template<K> };
