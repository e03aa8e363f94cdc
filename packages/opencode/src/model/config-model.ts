import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type * as Jsonc from "jsonc-parser";
import { ModelConfigError } from "../errors/model-config.error.ts";
import { parseModelRef, type ModelRef } from "./model-ref.ts";

/**
 * Reads the top-level `model` from the text of an opencode config (JSONC: comments and trailing
 * commas allowed). Returns undefined when the file sets no model; throws on broken syntax or a
 * model that is not "provider/id".
 */
export function modelFromConfigText(text: string, path = "<config>"): ModelRef | undefined {
  // Required here, not at import: only a run that reads an opencode config needs the parser.
  const { parse, printParseErrorCode } = createRequire(import.meta.url)("jsonc-parser") as typeof Jsonc;
  const errors: Jsonc.ParseError[] = [];
  const doc: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  const first = errors[0];
  if (first) throw new ModelConfigError(path, `invalid JSONC (${printParseErrorCode(first.error)} at offset ${first.offset})`);
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) throw new ModelConfigError(path, "top level is not an object");
  const model = (doc as Record<string, unknown>)["model"];
  if (model === undefined) return undefined;
  if (typeof model !== "string") throw new ModelConfigError(path, `"model" must be a string like "provider/model"`);
  const ref = parseModelRef(model);
  if (!ref) throw new ModelConfigError(path, `"model" is "${model}", expected "provider/model"`);
  return ref;
}

/** Reads the file and applies {@link modelFromConfigText}. */
export async function readConfigModel(path: string): Promise<ModelRef | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new ModelConfigError(path, `cannot read: ${(err as Error).message}`);
  }
  return modelFromConfigText(text, path);
}
