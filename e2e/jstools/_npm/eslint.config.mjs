// The lint of dlroute's JavaScript: ESLint's recommended rules (unused
// and undefined names, unreachable code, duplicate keys, ...), with the
// globals of where each file runs. Run by TestLint (package jstools).
import js from "@eslint/js";
import globals from "globals";

export default [
  js.configs.recommended,
  {
    files: ["playground/**/*.js", "wasm/node/*.js"],
    languageOptions: { ecmaVersion: 2024, sourceType: "module", globals: { ...globals.browser } },
  },
  {
    files: ["**/*.mjs", "playground/test/**", "wasm/node/test/**"],
    languageOptions: { ecmaVersion: 2024, sourceType: "module", globals: { ...globals.node } },
  },
  {
    rules: {
      "no-unused-vars": ["error", { argsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true }],
    },
  },
];
