// scripts/check-imports.mjs keeps the floors apart; this checks its rule that the tools never import
// the permission gate that reads their declared effects (docs/architecture.md#import-rules).
import { expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without types
import { layerViolations } from '../../scripts/check-imports.mjs';

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
