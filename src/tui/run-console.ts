// Placeholder until the console lands: says so plainly instead of pretending.
import type { CliOptions } from '../cli.js';

export async function runConsole(_options: CliOptions): Promise<number> {
  process.stderr.write('huddle: the full-screen console is not in this build yet; run `huddle -p "PROMPT"` for a headless run.\n');
  return 2;
}
