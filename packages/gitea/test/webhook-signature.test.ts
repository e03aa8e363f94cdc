import { describe, expect, it } from "vitest";
import { signBody, verifySignature } from "../src/index.ts";

const SECRET = "s3cret";
const body = Buffer.from('{\n  "action": "created",\n  "x": "\\u003cb\\u003e"\n}');

describe("verifySignature", () => {
  it("accepts Gitea's HMAC-SHA256 hex of the raw bytes, in either case", () => {
    const signature = signBody(body, SECRET);
    expect(verifySignature(body, signature, SECRET)).toBe(true);
    expect(verifySignature(body, signature.toUpperCase(), SECRET)).toBe(true);
  });

  it("rejects a signature over re-serialised JSON, another secret, or a changed byte", () => {
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(body.toString())));
    expect(verifySignature(body, signBody(reserialised, SECRET), SECRET)).toBe(false);
    expect(verifySignature(body, signBody(body, "other"), SECRET)).toBe(false);
    const changed = Buffer.from(body);
    changed[5] = changed[5]! ^ 1;
    expect(verifySignature(changed, signBody(body, SECRET), SECRET)).toBe(false);
  });

  it("rejects absent, empty, prefixed, short and repeated headers", () => {
    const good = signBody(body, SECRET);
    for (const header of [
      undefined,
      "",
      `sha256=${good}`,
      good.slice(0, 63),
      good + "0",
      "zz".repeat(32),
      [good],
    ]) {
      expect(verifySignature(body, header, SECRET)).toBe(false);
    }
  });
});
