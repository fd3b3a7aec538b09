// The parts of the docs made from the console's own data, so they are written once: the keys from
// the keymap (docs/console.md#keys and the README's cheat-sheet) and the slash commands from their
// definitions (docs/console.md#commands). scripts/docs.mjs writes them; test/tui/generated-docs.test.ts
// fails when a committed page is stale.
import type { GeneratedFile } from '../runtime/settings/generated-files.js';
import { withGeneratedSection } from '../runtime/generated-section.js';
import { COMMANDS } from './commands/commands.js';
import { commandUsage } from './commands/helpers.js';
import type { SlashCommand } from './commands/types.js';
import { CONSOLE_BINDINGS } from './keys/console-keymap.js';
import { cheatSheetMarkdown, keysMarkdown } from './keys/key-docs.js';

export const CONSOLE_PAGE = 'docs/console.md';

/** docs/console.md's command table. */
export function commandsMarkdown(commands: readonly SlashCommand[] = COMMANDS): string {
  const code = (text: string) => `\`${text.replace(/\|/g, '\\|')}\``;
  const rows = commands.map((command) => `| ${code(commandUsage(command))} | ${command.description.replace(/\|/g, '\\|')} |`);
  return ['| command | does |', '|---|---|', ...rows].join('\n');
}

export function consoleGeneratedFiles(): GeneratedFile[] {
  return [
    {
      file: CONSOLE_PAGE,
      update: (current) =>
        withGeneratedSection(withGeneratedSection(current, CONSOLE_PAGE, 'keys', keysMarkdown(CONSOLE_BINDINGS)), CONSOLE_PAGE, 'commands', commandsMarkdown()),
    },
    { file: 'README.md', update: (current) => withGeneratedSection(current, 'README.md', 'key-cheatsheet', cheatSheetMarkdown(CONSOLE_BINDINGS)) },
  ];
}
