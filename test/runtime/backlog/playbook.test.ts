// Playbooks as files (docs/playbooks.md): the built-in issue-to-pr, a workspace file that replaces or
// adds one, every bad file refused in one line naming it, the key and what was expected; and the
// plan approver a playbook names, layered between the settings files and --plan-approval.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPlaybook, parsePlaybook, PlaybookError, playbookNames } from '../../../src/runtime/backlog/playbook.js';
import { loadSettings, sourceOf } from '../../../src/runtime/settings/load.js';
import { configFromSettings } from '../../../src/runtime/settings/to-config.js';
import { playbookWidening } from '../../../src/runtime/settings/playbook-trust.js';
import { settingsWorkspace } from '../../helpers/settings-workspace.js';

function errorOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(PlaybookError);
    return (error as Error).message;
  }
  throw new Error('expected a PlaybookError');
}

const file = (front: string, body = '') => `---\n${front}\n---\n${body}`;

describe('the built-in issue-to-pr', () => {
  it('runs every phase of the issue in order, with its gates, caps, approver and review domains', () => {
    const book = loadPlaybook('/nonexistent', 'issue-to-pr');
    expect(book.source).toBe('built-in issue-to-pr');
    expect(book.phases.map((p) => p.phase)).toEqual([
      'understand',
      'explore',
      'plan',
      'approval',
      'implement',
      'self-review',
      'review',
      'ship',
      'watch-checks',
    ]);
    expect(book.phases.map((p) => p.gate ?? '-')).toEqual(['-', '-', '-', 'plan-approved', 'verify-green', '-', 'review-approved', 'pushed', 'checks-green']);
    expect(book).toMatchObject({
      explorers: 3,
      builder: { role: 'coder' },
      approval: {},
      verify: { retries: 3 },
      selfReview: true,
      ship: true,
      checks: { retries: 2, gate: true },
      reviewer: {
        role: 'reviewer',
        rounds: 3,
        domains: { domains: ['security', 'feasibility', 'granularity', 'dependencies', 'polish'], blocksAt: { security: 'high' } },
      },
    });
    expect(book.instructions).toMatch(/^Keep the change to what the issue asks/);
  });
});

describe('a playbook file', () => {
  it('replaces the built-in of its name or adds one; a short one leaves out the phases it does not list', () => {
    const { cwd } = settingsWorkspace('huddle-playbook-');
    mkdirSync(path.join(cwd, '.team', 'playbooks'), { recursive: true });
    writeFileSync(
      path.join(cwd, '.team', 'playbooks', 'quick-fix.md'),
      file(
        [
          'description: A fix without a plan, reviewed by another model for security only.',
          'phases:',
          '  - phase: implement',
          '    model: claude-haiku-4-5',
          '    verify: npm test',
          '    retries: 1',
          '  - phase: review',
          '    model: claude-opus-4-1',
          '    retries: 1',
          '    domains: [{ name: security, blocks_at: medium }, polish]',
        ].join('\n'),
        'Touch only the files the issue names.\n',
      ),
    );
    expect(playbookNames(cwd)).toEqual(['issue-to-pr', 'quick-fix']);
    const book = loadPlaybook(cwd, 'quick-fix');
    expect(book).toMatchObject({
      name: 'quick-fix',
      source: path.join('.team', 'playbooks', 'quick-fix.md'),
      explorers: 0,
      builder: { role: 'coder', model: 'claude-haiku-4-5' },
      verify: { command: 'npm test', retries: 1 },
      selfReview: false,
      ship: false,
      reviewer: { model: 'claude-opus-4-1', rounds: 1, domains: { domains: ['security', 'polish'], blocksAt: { security: 'medium' } } },
      instructions: 'Touch only the files the issue names.',
    });
    expect(book.approval).toBeUndefined();
    expect(book.checks).toBeUndefined();
  });

  it('is refused in one line that names the file, the key and what was expected', () => {
    const cases: Array<[string, string]> = [
      ['no front matter\n', 'x.md: no front matter (the file starts with --- and a phases: list; docs/playbooks.md)'],
      [file('phases: ['), 'x.md: the front matter is not YAML: '],
      [file('phases: []'), 'x.md: phases: needs at least 1 entry'],
      [
        file('phases:\n  - phase: build'),
        'x.md: phases[0].phase: expected one of "understand", "explore", "plan", "approval", "implement", "self-review", "review", "ship", "watch-checks", not "build"',
      ],
      [
        file('phases:\n  - phase: implement\n    retry: 2'),
        'x.md: phases[0].retry: unknown key (known keys: phase, gate, role, model, agent, helpers, approver, auto_approve_minutes, verify, retries, domains, instructions)',
      ],
      [file('phases:\n  - phase: plan\n  - phase: implement'), 'x.md: phases: a plan phase needs an approval phase after it'],
      [file('phases:\n  - phase: review\n  - phase: implement'), 'x.md: phases[1].phase: implement comes before review (the order is '],
      [file('phases:\n  - phase: explore\n    model: m\n  - phase: implement'), 'x.md: phases[0].model: the builder runs explore: say who on implement'],
      [file('phases:\n  - phase: implement\n    gate: checks-green'), `x.md: phases[0].gate: implement's gate is verify-green or none, not "checks-green"`],
      [file('phases:\n  - phase: implement\n  - phase: review\n    gate: none'), `x.md: phases[1].gate: review's gate is review-approved, not "none"`],
      [
        file('phases:\n  - phase: implement\n  - phase: review\n    domains: [{ name: security, blocks_at: severe }]'),
        'x.md: phases[1].domains[0].blocks_at: expected one of "low", "medium", "high", "critical", not "severe"',
      ],
      [
        file('phases:\n  - phase: approval\n    approver: robot\n  - phase: implement'),
        'x.md: phases[0].approver: expected one of "lead", "person", "auto-after", not "robot"',
      ],
      [file('phases:\n  - phase: implement\n    helpers: 2'), 'x.md: phases[0].helpers: only explore take helpers'],
    ];
    for (const [text, expected] of cases) {
      const message = errorOf(() => parsePlaybook('x', text, 'x.md'));
      expect(message.startsWith(expected), `${message}\n  expected to start with\n${expected}`).toBe(true);
      expect(message).not.toContain('\n');
    }
  });

  it('names the playbooks there are when the one asked for is not there', () => {
    const { cwd } = settingsWorkspace('huddle-playbook-');
    expect(errorOf(() => loadPlaybook(cwd, 'nightly'))).toBe("no playbook 'nightly': the playbooks are issue-to-pr (files in .team/playbooks/NAME.md)");
    expect(errorOf(() => loadPlaybook(cwd, '../x'))).toBe("--playbook takes a playbook's name (issue-to-pr), not '../x'");
  });

  it('says which fields widen trust: plans approved on a timer, a phase run by an external CLI', () => {
    expect(
      playbookWidening(
        file('phases:\n  - phase: approval\n    approver: auto-after\n  - phase: implement\n    agent: codex\n  - phase: review\n    agent: huddle'),
      ),
    ).toEqual(['phases[0].approver', 'phases[1].agent']);
    expect(playbookWidening(file('phases:\n  - phase: approval\n    approver: person\n  - phase: implement'))).toEqual([]);
  });

  it('with widening fields waits for the person’s trust when the settings load, and --trust records it', () => {
    const { cwd, home, write } = settingsWorkspace('huddle-playbook-');
    write('.team/playbooks/nightly.md', file('phases:\n  - phase: plan\n  - phase: approval\n    approver: auto-after\n  - phase: implement'));
    const env = { XDG_CONFIG_HOME: path.join(home, '.config') };
    expect(loadSettings({ cwd, home, env }).untrusted).toEqual([
      expect.objectContaining({ file: '.team/playbooks/nightly.md', settings: ['phases[1].approver'] }),
    ]);
    expect(loadSettings({ cwd, home, env, trust: true }).untrusted).toEqual([]);
    expect(loadSettings({ cwd, home, env }).untrusted).toEqual([]);
  });
});

describe('plan approval: one setting', () => {
  it('the playbook over the settings files, --plan-approval over the playbook, each named as the source', () => {
    const { cwd, home, write } = settingsWorkspace('huddle-playbook-');
    write('.team/settings.json', { plans: { approver: 'person', autoApproveMinutes: 20 } });
    const playbook = { label: 'playbook issue-to-pr', approver: 'auto-after' as const, autoApproveMinutes: 5, reviewMaxRounds: 2 };
    const flag = { label: '--plan-approval', approver: 'auto-after' as const, autoApproveMinutes: 0.01 };

    const byBook = loadSettings({ cwd, home, env: {}, flags: { runChoices: [playbook] } });
    expect(byBook.settings.plans).toEqual({ approver: 'auto-after', autoApproveMinutes: 5 });
    expect(sourceOf(byBook, ['plans', 'approver'])).toEqual(['playbook issue-to-pr']);
    expect(configFromSettings(byBook.settings, { cwd, env: {} })).toMatchObject({ planApproval: 'auto-after', planAutoApproveMinutes: 5, reviewMaxRounds: 2 });

    const byFlag = loadSettings({ cwd, home, env: {}, flags: { runChoices: [playbook, flag] } });
    expect(configFromSettings(byFlag.settings, { cwd, env: {} })).toMatchObject({
      planApproval: 'auto-after',
      planAutoApproveMinutes: 0.01,
      reviewMaxRounds: 2,
    });
    expect(sourceOf(byFlag, ['plans', 'autoApproveMinutes'])).toEqual(['--plan-approval']);

    const none = loadSettings({ cwd, home, env: {} });
    expect(configFromSettings(none.settings, { cwd, env: {} })).toMatchObject({ planApproval: 'person', planAutoApproveMinutes: 20 });
  });
});
