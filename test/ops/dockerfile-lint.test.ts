import { readFileSync } from "node:fs";
import { validate } from "dockerfile-utils";
import { describe, expect, it } from "vitest";
import { parseDockerfile } from "./dockerfile-parse.ts";
import { checkDockerfile } from "./dockerfile-rules.ts";

const DOCKERFILE = readFileSync(new URL("../../Dockerfile", import.meta.url), "utf8");

describe("Dockerfile lint", () => {
  it("has no syntax problem (dockerfile-utils, the Docker language server's validator)", () => {
    expect(validate(DOCKERFILE).map((d) => `line ${d.range.start.line + 1}: ${d.message}`)).toEqual([]);
  });

  it("follows the hadolint-style rules and runs node under an init as a non-root user", () => {
    expect(checkDockerfile(parseDockerfile(DOCKERFILE))).toEqual([]);
  });

  it("the rules catch what they claim to", () => {
    const bad = parseDockerfile(
      [
        "FROM node",
        "RUN apt-get update && apt-get install git",
        "RUN cd /app && npm install --global pnpm",
        "ADD . .",
        "CMD pnpm start",
      ].join("\n"),
    );
    const rules = checkDockerfile(bad).map((v) => v.rule);
    expect(rules.sort()).toEqual(
      [
        "DL3002",
        "DL3003",
        "DL3006",
        "DL3009",
        "DL3014",
        "DL3015",
        "DL3016",
        "DL3020",
        "DL3025",
        "R001",
        "R002",
      ].sort(),
    );
  });
});
