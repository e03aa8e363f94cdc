import { describe, expect, it } from "vitest";
import { compareVersions, ModelConfigError, modelFromConfigText, parseModelRef } from "../src/index.ts";

describe("modelFromConfigText", () => {
  it("reads the top-level model from JSONC with comments and trailing commas", () => {
    const text = `{
      // the default model
      "model": "anthropic/claude-sonnet-4/thinking", /* block */
      "provider": { "x": { "models": {}, }, },
    }`;
    expect(modelFromConfigText(text)).toEqual({ providerID: "anthropic", id: "claude-sonnet-4/thinking" });
  });

  it("returns undefined when no model is set", () => {
    expect(modelFromConfigText(`{ "provider": {} }`)).toBeUndefined();
  });

  it("rejects broken syntax and a model without provider", () => {
    expect(() => modelFromConfigText(`{ "model": `, "/etc/oc.json")).toThrow(ModelConfigError);
    expect(() => modelFromConfigText(`{ "model": "gpt-5" }`)).toThrow(/expected "provider\/model"/);
    expect(() => modelFromConfigText(`{ "model": 3 }`)).toThrow(/must be a string/);
  });
});

describe("model refs and versions", () => {
  it("splits provider/model at the first slash", () => {
    expect(parseModelRef("openrouter/meta/llama")).toEqual({ providerID: "openrouter", id: "meta/llama" });
    expect(parseModelRef("/x")).toBeUndefined();
    expect(parseModelRef("x/")).toBeUndefined();
  });

  it("compares dotted versions numerically", () => {
    expect(compareVersions("1.18.33", "1.18.18")).toBe(1);
    expect(compareVersions("1.9.0", "1.18.18")).toBe(-1);
    expect(compareVersions("v1.18.18", "1.18.18")).toBe(0);
    expect(compareVersions("1.18.18-beta.2", "1.18.18")).toBe(0);
  });
});
