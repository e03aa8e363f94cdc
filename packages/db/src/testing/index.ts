/** Per-test-file database isolation for vitest (imports vitest: never from production code). */
export * from "./test-database.ts";
export { SchemaTemplate } from "./schema-template.ts";
