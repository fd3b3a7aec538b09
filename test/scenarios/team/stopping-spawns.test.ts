// A team being stopped starts nobody (docs/contract.md#protocols): once suspend, stopAll or close has begun,
// a spawn is refused, and one already under way is waited for and stopped with the rest. Otherwise a
// teammate spawned in that moment (a backlog issue whose dependency was just reviewed) ran on past the
// stop, and with the person's queue already closed it sent its plan to the lead.
import { expect, it } from 'vitest';
import { replyText } from '../../helpers/fake-api.ts';
import { harnessPerTest } from '../../helpers/harness-per-test.js';

const open = harnessPerTest({ env: { HUDDLE_IDLE_TIMEOUT_MS: '600000' } });

it('a spawn asked for after the stop began is refused, and nobody runs once the stop is over', async () => {
  const h = await open();
  h.fake.script('alice', replyText('Ready.'));
  await h.spawn('alice', 'Wait for instructions.');
  await h.waitForStatus('alice', 'idle');

  const stopping = h.team.suspend('the run was interrupted');
  const late = h.team.spawn({ name: 'bob', role: 'coder', prompt: 'Build the next issue.' }, 'lead');
  await expect(late).rejects.toThrow('the team is closing (the run was interrupted); nobody new starts');
  await stopping;

  expect(h.team.liveTeammates().map((t) => t.name)).toEqual([]);
  expect(h.team.teammates.has('bob')).toBe(false);
  expect(h.requestsOf('bob')).toEqual([]);
});

it('a spawn under way when the stop begins is waited for, then stopped with the others', async () => {
  const h = await open();
  h.fake.script('carol', replyText('Ready.'));
  const spawning = h.team.spawn({ name: 'carol', role: 'coder', prompt: 'Build the next issue.' }, 'lead');
  await h.team.stopAll('the run is over');

  // It had begun, so it finished starting; the stop then ended its loop rather than leaving it running.
  await expect(spawning).resolves.toContain('spawned carol');
  const carol = h.team.teammates.get('carol')!;
  expect(carol.finished).toBe(true);
  expect(h.team.liveTeammates().map((t) => t.name)).toEqual([]);
});

it('a teammate stopped before its first turn keeps its spawn prompt in the record, for a resume to give back', async () => {
  const h = await open();
  await h.spawn('dana', 'Write usage.txt for the token docs.');
  // Stopped while its first turn had not begun (its status still being written): no model call is made.
  await h.team.suspend('the run was interrupted');

  expect(h.requestsOf('dana')).toEqual([]);
  const prompts = h.events.filter((e) => e.agent === 'dana' && e.type === 'prompt');
  expect(prompts).toEqual([expect.objectContaining({ text: 'Write usage.txt for the token docs.', source: 'spawn', by: 'lead' })]);
});
