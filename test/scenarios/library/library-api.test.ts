// The library's API from the source (docs/library.md), in process, against the fake Messages API: the program
// answers a question of ask mode (waitingForYou, approve) while it follows the events, closes the team
// resumable and opens it again with `resume: true`; an unfinished team opened with neither flag is one line.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import '../../helpers/isolated-config.js';
import { reply, replyText, startFakeApi, toolUse, type FakeApi } from '../../helpers/fake-api.js';
import { makeWorkspace, TEST_API_KEY, type Workspace } from '../../helpers/run-cli.js';
import { HuddleError, openTeam, type HuddleEvent } from '../../../src/library/index.js';

let fake: FakeApi;
let ws: Workspace;
let home: Workspace;
const saved = { ...process.env };

beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-library-api-');
  home = makeWorkspace('huddle-library-api-home-');
  mkdirSync(path.join(home.dir, '.config'), { recursive: true });
  // The library reads credentials where the command line does: the environment.
  Object.assign(process.env, { ANTHROPIC_API_KEY: TEST_API_KEY, ANTHROPIC_BASE_URL: fake.url, HOME: home.dir, HUDDLE_RETRY_BASE_MS: '5' });
});
afterEach(async () => {
  for (const key of ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'HOME', 'HUDDLE_RETRY_BASE_MS']) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
  await fake.close();
  ws.cleanup();
  home.cleanup();
});

describe('the library', () => {
  it('in ask mode puts a command off the allow-list to the program, which approves it while following the events', async () => {
    fake.script('lead', reply(toolUse('bash', { command: 'touch made-by-lead' })), replyText('Made it.'));
    const team = await openTeam({ workspace: ws.dir, permissionMode: 'ask' });
    const seen: HuddleEvent['type'][] = [];
    const following = (async () => {
      for await (const event of team.events()) {
        seen.push(event.type);
        if (event.type === 'approval_requested') {
          expect(team.waitingForYou().map((request) => request.id)).toEqual([event.id]);
          expect(team.approve(event.id)).toBe('approved: touch made-by-lead');
        }
      }
    })();
    await team.start('Make the file.');
    expect(await team.untilDone()).toEqual({ kind: 'settled' });
    expect(team.leadText()).toBe('Made it.');
    expect(existsSync(path.join(ws.dir, 'made-by-lead'))).toBe(true);
    await team.close({ resumable: true });
    // The iterator ended with the team.
    await following;
    expect(seen).toEqual(expect.arrayContaining(['approval_requested', 'approval_resolved', 'tool_result', 'text']));

    // Left unfinished: opening it again needs a word on what to do with it, said in the library's terms.
    const refused = await openTeam({ workspace: ws.dir }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(HuddleError);
    expect((refused as Error).message).toMatch(/pass resume: true to continue it or fresh: true to start a new team/);

    fake.script('lead', replyText('Still here.'));
    const again = await openTeam({ workspace: ws.dir, resume: true });
    await again.start('Are you there?');
    expect(await again.untilDone()).toEqual({ kind: 'settled' });
    expect(again.leadText()).toBe('Still here.');
    // The lead came back with its conversation: its first turn is in the new request.
    expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).toContain('Make the file.');
    await again.close();
    expect(fake.unscripted).toEqual([]);
  }, 60_000);

  it('yields the messages teammates send, and a board that changes as they work', async () => {
    fake.script('bob', reply(toolUse('send_message', { to: 'lead', content: 'bob reporting' })), replyText('Reported.'));
    const team = await openTeam({ workspace: ws.dir });
    const reports = team.messages({ to: 'lead' });
    const board = team.watchTasks();
    expect((await board.next()).value).toEqual([]);
    const task = await team.createTask({ subject: 'Report', description: 'Say you are there.' });
    expect((await board.next()).value).toEqual([expect.objectContaining({ id: task.id, subject: 'Report', status: 'pending' })]);
    await team.spawn({ name: 'bob', role: 'coder', prompt: 'Report to the lead.' });
    const first = await reports.next();
    expect(first.value).toMatchObject({ type: 'message_sent', from: 'bob', to: 'lead', content: 'bob reporting' });
    // Breaking out of an iterator stops it; the team goes on.
    await reports.return(undefined);
    await board.return(undefined);
    expect(team.members().map((member) => member.name)).toEqual(expect.arrayContaining(['lead', 'bob']));
    await team.close();
  }, 60_000);
});
