// A workspace playbook's widening fields — plans approved on huddle's clock, a phase run by an external
// CLI — wait for the person's trust like a role file's (docs/trust.md#settings-that-widen-trust): the
// console's backlog run opens with untrusted settings left out, and planChoices leaves these out too.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import '../helpers/isolated-config.js';
import { planChoices } from '../../src/session/backlog-setup.js';
import { TrustStore, contentHash } from '../../src/runtime/settings/trust.js';
import { workspaceKey } from '../../src/runtime/settings/load.js';
import { playbookWidening } from '../../src/runtime/settings/playbook-trust.js';

const WIDE = (readFileSync(path.join(import.meta.dirname, '../../src/runtime/backlog/issue-to-pr.md'), 'utf8') as string)
  .replace('name: issue-to-pr', 'name: wide')
  .replace(
    '  - phase: approval\n    gate: plan-approved',
    '  - phase: approval\n    gate: plan-approved\n    approver: auto-after\n    auto_approve_minutes: 5',
  )
  .replace('  - phase: implement\n    role: coder', '  - phase: implement\n    role: coder\n    agent: codex');

let root: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'huddle-playbook-trust-')));
  mkdirSync(path.join(root, '.team', 'playbooks'), { recursive: true });
  writeFileSync(path.join(root, '.team', 'playbooks', 'wide.md'), WIDE);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('a workspace playbook that widens trust', () => {
  it('has its widening fields left out until the person trusts it, and kept once trusted', () => {
    expect(playbookWidening(WIDE).length).toBeGreaterThan(0);
    const untrusted = planChoices(root, 'wide', undefined);
    if ('error' in untrusted) throw new Error(untrusted.error);
    expect(untrusted.playbook.approval?.approver).toBeUndefined();
    expect(untrusted.playbook.builder.agent).toBeUndefined();

    TrustStore.at().record(workspaceKey(root), [{ file: '.team/playbooks/wide.md', sha256: contentHash(WIDE), settings: playbookWidening(WIDE) }]);
    const trusted = planChoices(root, 'wide', undefined);
    if ('error' in trusted) throw new Error(trusted.error);
    expect(trusted.playbook.approval?.approver).toBe('auto-after');
    expect(trusted.playbook.builder.agent).toBe('codex');
  });
});
