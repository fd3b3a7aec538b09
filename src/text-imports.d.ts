// Markdown files imported by the code are bundled as their text (esbuild's text loader in scripts/bundle-options.mjs,
// the same in vitest.config.ts): the prompts in src/agents/prompts (docs/contract.md#injected-turns).
declare module '*.md' {
  const text: string;
  export default text;
}
