import js from "@eslint/js"
import { defineConfig } from "eslint/config"
import tseslint from "typescript-eslint"

export default defineConfig(
  {
    ignores: [
      "**/dist/**",
      "**/node_modules/**",
      "bench/results/**",
      "coverage/**",
      ".scratch/**",
      // Generated from the server's OpenAPI document by the console's build.
      "packages/console/src/api.d.ts"
    ]
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "@typescript-eslint/array-type": ["error", { default: "generic" }],
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" }
      ],
      "@typescript-eslint/no-empty-object-type": ["error", { allowInterfaces: "with-single-extends" }],
      "no-console": "error"
    }
  },
  {
    files: ["**/test/**", "bench/**", "examples/**", "scripts/**", "packages/*/scripts/**"],
    rules: { "no-console": "off" }
  },
  {
    // Tests read wire bodies as plain JSON after checking them against the published schemas.
    files: ["**/test/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" }
  },
  {
    files: ["**/*.mjs", "**/*.js"],
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly" } }
  }
)
