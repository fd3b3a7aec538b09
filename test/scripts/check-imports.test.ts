// scripts/check-imports.mjs keeps the floors apart and the rooms in order; one case per rule of
// docs/architecture.md#import-rules, each with an import the rule refuses and one it allows.
import { expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without types
import { layerViolations, orderViolations } from '../../scripts/check-imports.mjs';

type Graph = Map<string, Array<{ to: string; kind: string }>>;

it('refuses runtime/tools importing runtime/permissions, and allows the other way', () => {
  const graph: Graph = new Map([
    ['src/runtime/tools/bash.ts', [{ to: 'src/runtime/permissions/permission-mode.ts', kind: 'import-statement' }]],
    ['src/runtime/permissions/permission-gate.ts', [{ to: 'src/runtime/tools/types.ts', kind: 'import-statement' }]],
  ]);
  expect(layerViolations(graph)).toEqual([
    'src/runtime/tools/bash.ts imports src/runtime/permissions/permission-mode.ts (the tools are below the permission gate that reads their declarations)',
  ]);
});

it('refuses a wing of src/agents importing a wing above it, and allows the wings below and the shared files', () => {
  const graph: Graph = new Map([
    [
      'src/agents/loop/agent.ts',
      [
        { to: 'src/agents/lifecycle/team.ts', kind: 'import-statement' },
        { to: 'src/agents/prompts/prompts.ts', kind: 'import-statement' },
      ],
    ],
    [
      'src/agents/lifecycle/team.ts',
      [
        { to: 'src/agents/loop/agent.ts', kind: 'import-statement' },
        { to: 'src/agents/team-context.ts', kind: 'import-statement' },
      ],
    ],
    ['src/agents/prompts/memory.ts', [{ to: 'src/agents/team-context.ts', kind: 'import-statement' }]],
  ]);
  expect(orderViolations(graph)).toEqual([
    'src/agents/loop/agent.ts imports src/agents/lifecycle/team.ts (the wings of src/agents build upward: prompts < loop < tools < lifecycle)',
  ]);
});

const edges = (pairs: Array<[string, string]>): Graph => {
  const graph: Graph = new Map();
  for (const [from, to] of pairs) graph.set(from, [...(graph.get(from) ?? []), { to, kind: 'import-statement' }]);
  return graph;
};

it('refuses a floor importing a floor above it: runtime < agents < session < faces', () => {
  const graph = edges([
    ['src/runtime/settings/load.ts', 'src/session/settings.ts'],
    ['src/runtime/tools/bash.ts', 'ink'],
    ['src/agents/lifecycle/team.ts', 'src/session/team-session.ts'],
    ['src/agents/loop/agent.ts', 'src/tui/render/wrap.ts'],
    ['src/session/team-session.ts', 'src/tui/console-controller.ts'],
    ['src/session/team-session.ts', 'src/agents/lifecycle/team.ts'],
    ['src/agents/lifecycle/team.ts', 'src/runtime/store/bus.ts'],
  ]);
  expect(layerViolations(graph)).toEqual([
    'src/runtime/settings/load.ts imports src/session/settings.ts (src/runtime imports no session core)',
    'src/runtime/tools/bash.ts imports ink (src/runtime imports no ink)',
    'src/agents/lifecycle/team.ts imports src/session/team-session.ts (src/agents imports no session core and no face)',
    'src/agents/loop/agent.ts imports src/tui/render/wrap.ts (src/agents imports no session core and no face)',
    'src/session/team-session.ts imports src/tui/console-controller.ts (src/session imports no face)',
  ]);
});

it('refuses a face reaching into src/agents, and allows it the session core and the runtime', () => {
  const graph = edges([
    ['src/headless.ts', 'src/agents/tools/checkpointed-tools.ts'],
    ['src/cli.ts', 'src/agents/demo/demo.ts'],
    ['src/faces/mcp-server.ts', 'src/agents/external/huddle-tools.ts'],
    ['src/tui/components/TerminalPane.tsx', 'src/agents/external/pty-driver.ts'],
    ['src/faces/mcp-server.ts', 'src/session/team-tool-source.ts'],
    ['src/headless.ts', 'src/session/team-session.ts'],
    ['src/tui/run-console.ts', 'src/runtime/notify/notifier.ts'],
  ]);
  const why = '(a face reaches the team through src/session, not into the agents)';
  expect(layerViolations(graph)).toEqual([
    `src/headless.ts imports src/agents/tools/checkpointed-tools.ts ${why}`,
    `src/cli.ts imports src/agents/demo/demo.ts ${why}`,
    `src/faces/mcp-server.ts imports src/agents/external/huddle-tools.ts ${why}`,
    `src/tui/components/TerminalPane.tsx imports src/agents/external/pty-driver.ts ${why}`,
  ]);
});

it('refuses a room of src/runtime importing a room above it or a peer of its tier, and allows the rooms below', () => {
  const graph = edges([
    // upward: the bottom importing a tool, the store's records importing a backend, events importing the model
    ['src/runtime/process/run-command.ts', 'src/runtime/tools/output-cap.ts'],
    ['src/runtime/store/board.ts', 'src/runtime/store/file/file-board.ts'],
    ['src/runtime/events/event-types.ts', 'src/runtime/model/pricing.ts'],
    ['src/runtime/settings/describe.ts', 'src/runtime/store/postgres/pg-url.ts'],
    // peers
    ['src/runtime/store/postgres/pg-allow-list.ts', 'src/runtime/store/file/file-store.ts'],
    ['src/runtime/fs/atomic-file.ts', 'src/runtime/git/host-git.ts'],
    // downward: allowed
    ['src/runtime/events/event-types.ts', 'src/runtime/store/bus.ts'],
    ['src/runtime/store/file/file-bus.ts', 'src/runtime/store/bus-rules.ts'],
    ['src/runtime/store/bus-rules.ts', 'src/runtime/events/event-types.ts'],
    ['src/runtime/permissions/permission-gate.ts', 'src/runtime/tools/registry.ts'],
    ['src/runtime/store/file/file-store.ts', 'src/runtime/settings/settings-allow-list.ts'],
    ['src/runtime/settings/settings-allow-list.ts', 'src/runtime/store/file-lock.ts'],
  ]);
  const why = (line: string) => line.replace(/ \(src\/runtime builds upward: .*\)$/, ' (upward)');
  expect(orderViolations(graph).map(why)).toEqual([
    'src/runtime/process/run-command.ts imports src/runtime/tools/output-cap.ts (upward)',
    'src/runtime/store/board.ts imports src/runtime/store/file/file-board.ts (upward)',
    'src/runtime/events/event-types.ts imports src/runtime/model/pricing.ts (upward)',
    'src/runtime/settings/describe.ts imports src/runtime/store/postgres/pg-url.ts (upward)',
    'src/runtime/store/postgres/pg-allow-list.ts imports src/runtime/store/file/file-store.ts (store/postgres/ and store/file/ are peers: neither imports the other)',
    'src/runtime/fs/atomic-file.ts imports src/runtime/git/host-git.ts (fs/ and git/ are peers: neither imports the other)',
  ]);
});

it('refuses a room of src/tui importing a room above it, and allows the rooms below', () => {
  const graph = edges([
    ['src/tui/state/event-bridge.ts', 'src/tui/components/glyphs.ts'],
    ['src/tui/render/pane-window.ts', 'src/tui/state/console-store.ts'],
    ['src/tui/keys/intents.ts', 'src/tui/components/ask-box.ts'],
    ['src/tui/state/palette.ts', 'src/tui/commands/commands.ts'],
    ['src/tui/components/StatusBar.tsx', 'src/tui/render/tokens.ts'],
    ['src/tui/keys/intents.ts', 'src/tui/console-controller.ts'],
    ['src/tui/run-console.ts', 'src/tui/components/App.tsx'],
  ]);
  const why = '(src/tui builds upward: render, terminal < state < commands < console-controller < keys < hooks < components < console-session < run-console)';
  expect(orderViolations(graph)).toEqual([
    `src/tui/state/event-bridge.ts imports src/tui/components/glyphs.ts ${why}`,
    `src/tui/render/pane-window.ts imports src/tui/state/console-store.ts ${why}`,
    `src/tui/keys/intents.ts imports src/tui/components/ask-box.ts ${why}`,
    `src/tui/state/palette.ts imports src/tui/commands/commands.ts ${why}`,
  ]);
});
