import { describe, expect, it } from "vitest";
import { InvalidRepoNameError, branchName, commitMessage, validateRepoName } from "../src/index.ts";

describe("validateRepoName", () => {
  it("accepts owner/name, with .git or as a URL on the configured host", () => {
    expect(validateRepoName("demo/hello")).toEqual({ owner: "demo", name: "hello", fullName: "demo/hello" });
    expect(validateRepoName(" demo/hello.git ").fullName).toBe("demo/hello");
    expect(validateRepoName("my-org/my_repo.v2").fullName).toBe("my-org/my_repo.v2");
    expect(validateRepoName("https://git.example.com/demo/hello", { baseUrl: "https://git.example.com" }).fullName).toBe("demo/hello");
    expect(validateRepoName("https://git.example.com/gitea/demo/hello.git", { baseUrl: "https://git.example.com/gitea/" }).fullName).toBe("demo/hello");
  });

  it.each([
    ["", /empty/],
    ["hello", /owner\/name/],
    ["a/b/c", /owner\/name/],
    ["../secret", /`\.\.`/],
    ["demo/..", /`\.\.`/],
    ["/etc/passwd", /absolute/],
    ["~/repo", /absolute/],
    ["C:\\repo\\x", /absolute/],
    ["demo\\hello", /backslash/],
    ["demo/.hidden", /letters, digits/],
    ["demo/hello world", /letters, digits/],
    ["demo/x.lock", /letters, digits/],
    ["-rf/hello", /letters, digits/],
    ["https://evil.example/demo/hello", /URLs are not accepted/],
    ["file:///etc/demo/hello", /URLs are not accepted/],
  ])("rejects %j", (input, why) => {
    expect(() => validateRepoName(input)).toThrow(InvalidRepoNameError);
    expect(() => validateRepoName(input)).toThrow(why);
  });

  it("accepts only the configured host, and never a URL with credentials", () => {
    const baseUrl = "https://git.example.com";
    expect(() => validateRepoName("https://evil.example/demo/hello", { baseUrl })).toThrow(/only repositories on git.example.com/);
    expect(() => validateRepoName("http://git.example.com/demo/hello", { baseUrl })).toThrow(/only repositories on/);
    expect(() => validateRepoName("ssh://git.example.com/demo/hello", { baseUrl })).toThrow(/only repositories on/);
    expect(() => validateRepoName("https://user:s3cret@git.example.com/demo/hello", { baseUrl })).toThrow(/credentials/);
    expect(() => validateRepoName("https://user:s3cret@git.example.com/demo/hello", { baseUrl })).not.toThrow(/s3cret/);
    expect(() => validateRepoName("https://git.example.com/demo/../x/hello", { baseUrl })).toThrow(InvalidRepoNameError);
    expect(() => validateRepoName("https://git.example.com/demo/%2e%2e", { baseUrl })).toThrow(/`\.\.`/);
  });
});

describe("branchName and commitMessage", () => {
  it("makes ratatoskr/<id>-<slug> from any title, Cyrillic included", () => {
    expect(branchName(42, "Fix the greeting!")).toBe("ratatoskr/42-fix-the-greeting");
    expect(branchName(7, "Исправить приветствие")).toBe("ratatoskr/7-ispravit-privetstvie");
    expect(branchName(3, "  ***  ")).toBe("ratatoskr/3-task");
    expect(branchName(9, "x".repeat(100))).toBe(`ratatoskr/9-${"x".repeat(40)}`);
    expect(branchName(9, `${"a".repeat(39)} b`)).toBe(`ratatoskr/9-${"a".repeat(39)}`);
    expect(() => branchName(0, "x")).toThrow(RangeError);
  });

  it("puts the title in the subject and the task and round in the body", () => {
    expect(commitMessage({ taskId: 5, title: "Add  a\nREADME", round: 2 })).toBe("Add a README\n\nratatoskr task #5, round 2");
  });
});
