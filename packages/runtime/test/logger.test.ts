import { describe, expect, it } from "vitest";
import { jobLogger, scrubError, scrubSecrets } from "../src/index.ts";
import { captureLogger } from "./support/test-env.ts";

const SECRETS = {
  token: "tok_5f2a9c1e",
  password: "pw-hunter2",
  secret: "sec-0b7d",
  webhookSecret: "whsec-93kd",
  apiKey: "key-zz81",
  bearer: "eyJhbGciOiJIUzI1NiJ9.payload.sig",
  giteaToken: "gitea-4c0ffee",
  urlPass: "url-pass-77",
};

describe("createLogger", () => {
  it("writes JSON lines with service and level, and job ids on child loggers", () => {
    const { logger, lines } = captureLogger("dev");
    jobLogger(logger, { queue: "dev", jobId: "7-run-dev-3", taskId: 7 }).info("job started");
    expect(lines()).toEqual([
      expect.objectContaining({
        service: "dev",
        level: "info",
        queue: "dev",
        jobId: "7-run-dev-3",
        taskId: 7,
        msg: "job started",
      }),
    ]);
  });

  it("redacts secrets by key at the top level and nested", () => {
    const { logger, text, lines } = captureLogger();
    logger.info({ token: SECRETS.token, user: { password: SECRETS.password } }, "top and nested");
    logger.info(
      { gitea: { webhookSecret: SECRETS.webhookSecret, apiKey: SECRETS.apiKey, secret: SECRETS.secret } },
      "nested",
    );
    logger.info(
      { config: { giteaToken: SECRETS.giteaToken, deep: { deeper: { authToken: "auth-tok-1" } } } },
      "config",
    );
    logger.info({ req: { headers: { authorization: `Bearer ${SECRETS.bearer}` } } }, "request");
    logger.info({ headers: { authorization: `token ${SECRETS.token}` } }, "headers");

    const out = text();
    for (const value of [...Object.values(SECRETS), "auth-tok-1"]) expect(out).not.toContain(value);
    const [first, , third, fourth] = lines();
    expect(first).toMatchObject({ token: "[REDACTED]", user: { password: "[REDACTED]" } });
    expect(third).toMatchObject({
      config: { giteaToken: "[REDACTED]", deep: { deeper: { authToken: "[REDACTED]" } } },
    });
    expect(fourth).toMatchObject({ req: { headers: { authorization: "[REDACTED]" } } });
  });

  it("scrubs secrets embedded in messages and errors", () => {
    const { logger, text, lines } = captureLogger();
    logger.warn(`cannot reach redis://:${SECRETS.urlPass}@redis:6379`);
    const err = new Error(
      `push to https://bot:${SECRETS.token}@gitea.local/o/r.git failed; sent Authorization: Bearer ${SECRETS.bearer}`,
    );
    logger.error({ err }, "push failed");
    logger.error(err);
    logger.info({ body: `{"access_token":"${SECRETS.apiKey}","ok":true}` }, "response body");

    const out = text();
    for (const value of Object.values(SECRETS)) expect(out).not.toContain(value);
    expect(lines()).toHaveLength(4);
    expect(out).toContain("redis://[REDACTED]@redis:6379");
    expect(out).toContain("https://[REDACTED]@gitea.local/o/r.git");
  });
});

describe("scrubSecrets", () => {
  it.each([
    ["https://user:pass-1@host/x", "https://[REDACTED]@host/x"],
    ["git clone https://ghp_abc123@github.com/o/r", "git clone https://[REDACTED]@github.com/o/r"],
    ["Authorization: token 0123456789abcdef", "Authorization: [REDACTED]"],
    ["header Bearer abc.def.ghi end", "header Bearer [REDACTED] end"],
    [
      "GET https://api.telegram.org/bot123456789:AAH-x_yz0123456789abcdefghijklmnop/getMe",
      "GET https://api.telegram.org/bot[REDACTED]/getMe",
    ],
    ['{"password":"p\\"w","user":"ann"}', '{"password":"[REDACTED]","user":"ann"}'],
    ["/hook?secret=abc&x=1", "/hook?secret=[REDACTED]&x=1"],
    ["nothing secret here: tokens used 1200", "nothing secret here: tokens used 1200"],
  ])("scrubs %j", (input, expected) => {
    expect(scrubSecrets(input)).toBe(expected);
  });

  it("keeps an error's name and scrubs its message and stack", () => {
    const err = new TypeError("fetch https://a:pw-9@h failed");
    const safe = scrubError(err);
    expect(safe.name).toBe("TypeError");
    expect(safe.message).toBe("fetch https://[REDACTED]@h failed");
    expect(safe.stack).not.toContain("pw-9");
  });
});
