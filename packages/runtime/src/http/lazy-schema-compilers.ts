import { createRequire } from "node:module";
import type { FastifyServerOptions } from "fastify";

type CompilersFactory = NonNullable<
  NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]
>;
type ValidatorFactory = NonNullable<CompilersFactory["buildValidator"]>;
type SerializerFactory = NonNullable<CompilersFactory["buildSerializer"]>;

/** Resolves what fastify itself depends on (its default compilers), as fastify would. */
const fastifyRequire = createRequire(createRequire(import.meta.url).resolve("fastify"));

let validatorFactory: ValidatorFactory | undefined;
let serializerFactory: SerializerFactory | undefined;

/**
 * Fastify's own default schema compilers (ajv, fast-json-stringify), loaded when a route first
 * needs one instead of when a server is built: our routes check payloads with zod and have no
 * JSON schema, and loading them took every process ~1.5 MB of heap. Given as builders, fastify
 * counts the validator as custom, which differs in one thing only: a `headers` schema's keys are
 * not lower-cased for it.
 */
export const lazySchemaCompilers: CompilersFactory = {
  buildValidator: (externalSchemas, options) =>
    (validatorFactory ??= (fastifyRequire("@fastify/ajv-compiler") as () => ValidatorFactory)())(
      externalSchemas,
      options,
    ),
  buildSerializer: (externalSchemas, options) =>
    (serializerFactory ??= (
      fastifyRequire("@fastify/fast-json-stringify-compiler") as () => SerializerFactory
    )())(externalSchemas, options),
};
