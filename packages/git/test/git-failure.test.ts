import { describe, expect, it } from "vitest";
import { classifyGitFailure } from "../src/git-failure.ts";

const ctx = { op: "clone", repo: "demo/hello", where: "https://git.example.com" };

describe("classifyGitFailure", () => {
  it.each([
    ["fatal: unable to access 'https://git.example.com/demo/hello.git/': Could not resolve host: git.example.com", "host-unreachable"],
    ["fatal: unable to access 'http://127.0.0.1:1/demo/hello.git/': Failed to connect to 127.0.0.1 port 1: Connection refused", "host-unreachable"],
    ["error: RPC failed; HTTP 502 curl 22 The requested URL returned error: 502", "host-unreachable"],
    ["fatal: repository 'https://git.example.com/demo/nope.git/' not found", "repo-not-found"],
    ["fatal: '/srv/git/demo/nope.git' does not appear to be a git repository", "repo-not-found"],
    ["fatal: Authentication failed for 'https://git.example.com/demo/hello.git/'", "auth-failed"],
    ["fatal: could not read Username for 'https://git.example.com': terminal prompts disabled", "auth-failed"],
    ["fatal: unable to access 'https://git.example.com/demo/hello.git/': The requested URL returned error: 403", "auth-failed"],
    ["error: unable to write file hello.txt: No space left on device\nfatal: cannot store blob", "workspace-io"],
    ["fatal: could not create work tree dir 'hello': Permission denied", "workspace-io"],
    ["fatal: bad object HEAD", "git-failed"],
  ])("%s → %s", (output, code) => {
    const error = classifyGitFailure(output, ctx);
    expect(error.code).toBe(code);
    expect(error.message).toContain("demo/hello");
  });
});
