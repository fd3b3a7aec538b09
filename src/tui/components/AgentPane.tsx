// The focused agent's pane: a header line, then only the transcript rows that fit.
import { Box, Text } from 'ink';
import { useStore } from 'zustand';
import type { ConsoleStore } from '../state/console-store.js';
import { visibleLines } from '../render/transcript-lines.js';
import { STATUS_COLOR, STATUS_GLYPH, contextPercent, formatTokens } from './glyphs.js';

interface Props {
  store: ConsoleStore;
  width: number;
  height: number;
}

export function AgentPane({ store, width, height }: Props) {
  const name = useStore(store, (state) => state.focus);
  const agent = useStore(store, (state) => state.agents[state.focus]);
  const scroll = useStore(store, (state) => state.scroll[state.focus] ?? 0);
  const expanded = useStore(store, (state) => state.expanded[state.focus] ?? false);
  const keyMissing = useStore(store, (state) => state.keyMissing);
  useStore(store, (state) => state.highlighterReady);
  if (!agent) return <Box height={height} />;

  const bodyRows = Math.max(1, height - 1);
  const { lines } = visibleLines(agent.items, width, bodyRows - (scroll > 0 ? 1 : 0), scroll, expanded);
  const context = contextPercent(agent.contextTokens, agent.model);
  // Waiting (on a permission, say) says on what, even mid-tool.
  const doing = agent.status === 'waiting' && agent.reason ? agent.reason : agent.activeTool ? `running ${agent.activeTool}` : agent.reason;
  const empty = agent.items.length === 0;
  return (
    <Box flexDirection="column" height={height} width={width} overflow="hidden">
      <Box height={1} overflow="hidden">
        <Text color={STATUS_COLOR[agent.status]}>{STATUS_GLYPH[agent.status]} </Text>
        <Text bold>{name}</Text>
        <Text dimColor>
          {' '}
          ({agent.role}) {agent.status}
          {doing ? `: ${doing}` : ''} · ctx {context}% · {formatTokens(agent.inputTokens)} in {formatTokens(agent.outputTokens)} out
        </Text>
      </Box>
      {empty ? (
        <EmptyPane name={name} keyMissing={keyMissing} />
      ) : (
        <Text wrap="truncate">{lines.join('\n')}</Text>
      )}
      {scroll > 0 ? <Text dimColor>↓ {scroll} more rows below (PgDn)</Text> : null}
    </Box>
  );
}

function EmptyPane({ name, keyMissing }: { name: string; keyMissing: boolean }) {
  if (keyMissing) {
    return (
      <Box flexDirection="column">
        <Text color="yellow">No API key is set, so the agents cannot reach a model.</Text>
        <Text> </Text>
        <Text>Quit (Ctrl+C twice), then either:</Text>
        <Text>  export ANTHROPIC_API_KEY=sk-ant-…          then run huddle again, or</Text>
        <Text>  huddle --api-key-file ~/.config/anthropic-key</Text>
        <Text>For another server that speaks the Anthropic Messages API, also set ANTHROPIC_BASE_URL.</Text>
        <Text> </Text>
        <Text dimColor>To look around without a key: huddle demo</Text>
      </Box>
    );
  }
  return name === 'lead' ? (
    <Box flexDirection="column">
      <Text>Tell the lead what to build. It plans tasks, spawns teammates and reports back.</Text>
      <Text dimColor>Tab switches panes · Ctrl+T tasks · /team roster · /help commands and keys</Text>
    </Box>
  ) : (
    <Text dimColor>Nothing yet. Typing here sends a message to {name}.</Text>
  );
}
