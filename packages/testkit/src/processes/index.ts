export * from "./service-process.ts";
