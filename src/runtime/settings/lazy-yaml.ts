// YAML, for the front matter of workspace Markdown files (roles, playbooks). yaml is CommonJS: an
// `import` of it is evaluated with the chunk that imports it, at every start, while esbuild bundles this
// require() as a wrapper evaluated on its first call, when a file with front matter is read.
import type * as Yaml from 'yaml';

/** yaml's `parse`, evaluating the yaml package on first use. */
export function parseYaml(text: string): unknown {
  return (require('yaml') as typeof Yaml).parse(text);
}
