// Where this huddle's own entry (dist/cli.js) is, to start huddle again as a child (the MCP server
// an external teammate calls). Taken from the module itself, not from argv: an installed huddle
// runs as `huddle` (a symlink or a shim on PATH), and argv[1] then names the shim, not cli.js.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function huddleEntry(): string | undefined {
  // In the bundle every chunk sits next to cli.js.
  const here = fileURLToPath(import.meta.url);
  const bundled = path.join(path.dirname(here), 'cli.js');
  if (path.extname(here) === '.js' && existsSync(bundled)) return bundled;
  // From source (tests run src/ directly): the cli.js that started this process, if any.
  const started = process.argv[1];
  return started && /cli\.m?js$/.test(started) ? path.resolve(started) : undefined;
}
