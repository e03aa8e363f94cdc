export { notifierService } from "./notifier.service.ts";
export * from "./telegram/index.ts";
export * from "./i18n/index.ts";
