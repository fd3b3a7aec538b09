// /help: every command and key.
import { Box, Text } from 'ink';
import { COMMANDS } from '../commands/commands.js';

export const KEYS: Array<[string, string]> = [
  ['Enter', 'send the input to the agent in view (the lead gets a prompt, a teammate a message)'],
  ['Tab / Shift+Tab', 'next / previous pane (Tab completes a /command)'],
  ['Alt+1 … Alt+9', 'jump to a pane'],
  ['Ctrl+T', 'the task board'],
  ['Ctrl+Y', 'the "needs you" queue: ↑/↓ select, y approve, n deny, a approve always'],
  ['Esc', 'interrupt the agent in view (or close a view)'],
  ['PgUp / PgDn', 'scroll the pane'],
  ['Ctrl+O', 'show or hide tool results in the pane'],
  ['↑ / ↓', 'input history'],
  ['\\ then Enter', 'a new line in the input (pasting keeps newlines too)'],
  ['Ctrl+C twice', 'quit'],
];

export function HelpView({ height }: { height: number }) {
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      <Text bold>
        Commands <Text dimColor>· Esc closes</Text>
      </Text>
      {COMMANDS.map((command) => (
        <Text key={command.name} wrap="truncate">
          <Text color="cyan">{`/${command.name}${command.args ? ` ${command.args}` : ''}`.padEnd(28)}</Text>
          {command.description}
        </Text>
      ))}
      <Text> </Text>
      <Text bold>Keys</Text>
      {KEYS.map(([key, what]) => (
        <Text key={key} wrap="truncate">
          <Text color="cyan">{key.padEnd(28)}</Text>
          {what}
        </Text>
      ))}
    </Box>
  );
}
