// scripts/check-imports.mjs keeps the floors apart; this checks its rule that the tools never import
// the permission gate that reads their declared effects (docs/architecture.md#import-rules).
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
