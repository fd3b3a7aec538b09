// A huddle that cannot find its own cli.js (embedded, no HUDDLE_CLI) refuses to start an external
// teammate whose MCP server is huddle itself, in one line, and records no member: no ghost `working`
// teammate is left on the roster (agents/lifecycle/team.ts checks before recording it).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTeamHarness, type TeamHarness } from '../../helpers/team-harness.js';
import { trustWorkspace } from '../../helpers/trust.js';

describe('an external teammate huddle cannot give its MCP server', () => {
  let h: TeamHarness;
  const savedCli = process.env.HUDDLE_CLI;
  beforeEach(async () => {
    delete process.env.HUDDLE_CLI;
    h = await openTeamHarness();
    mkdirSync(path.join(h.root, '.team'), { recursive: true });
    // Any program stands in for the CLI: the spawn is refused before it would start.
    writeFileSync(path.join(h.root, '.team', 'settings.json'), JSON.stringify({ agents: { 'claude-code': { command: process.execPath } } }));
    trustWorkspace(h.root);
  });
  afterEach(async () => {
    await h.close();
    if (savedCli === undefined) delete process.env.HUDDLE_CLI;
    else process.env.HUDDLE_CLI = savedCli;
  });

  it('is refused with the reason, and leaves no member behind', async () => {
    const refused = await h.team.spawn({ name: 'bob', role: 'coder', prompt: 'Do it.', agent: 'claude-code' }, 'lead').then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(refused).toMatch(/cannot tell where huddle's cli\.js is for its MCP server; set HUDDLE_CLI/);
    expect(h.team.ctx.roster.get('bob')).toBeUndefined();
    expect(h.team.teammate('bob')).toBeUndefined();
  });
});
