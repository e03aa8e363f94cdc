// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["**/node_modules/**", "**/dist/**", "packages/db/generated/**", ".tmp/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-console": ["error", { allow: ["error"] }],
    },
  },
  {
    // pg's values come through pgDriver, which keeps pg's import-time Cloudflare probe from loading
    // Node's fetch stack into every service (packages/db/src/sql/pg-driver.ts).
    files: ["packages/*/src/**/*.ts", "services/*/src/**/*.ts"],
    ignores: ["packages/db/src/sql/pg-driver.ts"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        { paths: [{ name: "pg", message: "Import pgDriver from @ratatoskr/db (or ../sql/pg-driver.ts) instead.", allowTypeImports: true }] },
      ],
    },
  },
  {
    files: ["scripts/**/*.mjs", "deploy/**/*.mjs"],
    languageOptions: {
      globals: { process: "readonly", console: "readonly", URL: "readonly", fetch: "readonly", AbortSignal: "readonly", AbortController: "readonly", Buffer: "readonly", setTimeout: "readonly", clearTimeout: "readonly" },
    },
  },
  {
    files: ["bench/**", "chaos/**", "**/cli/**", "services/demo.ts", "test/**"],
    rules: { "no-console": "off" },
  },
);
