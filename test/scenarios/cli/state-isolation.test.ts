// The suite leaves nothing in the person's home (test/helpers/isolated-config.ts): every test file
// runs with its own XDG_STATE_HOME in a temporary directory, and the runs the helpers start get it
// too, so the checkpoint shadow of a test's workspace (docs/trust.md#checkpoints-and-rewind) lands
// there, not in ~/.local/state/huddle/checkpoints.
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.js';
import { makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';
import { checkpointDirFor } from '../../../src/runtime/workspace/checkpoints.js';

let fake: FakeApi;
let ws: Workspace;
beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-state-isolation-');
});
afterEach(async () => {
  await fake.close();
  ws.cleanup();
});

it("a headless run started by the test helpers checkpoints into the test's own state directory, never the home's", async () => {
  const state = process.env.XDG_STATE_HOME;
  expect(state).toBeDefined();
  const tmp = path.resolve(os.tmpdir()) + path.sep;
  expect(path.resolve(state!).startsWith(tmp), `${state} is not under ${tmp}`).toBe(true);
  expect(path.resolve(state!).startsWith(path.join(os.homedir(), '.local', 'state'))).toBe(false);

  // Where the shadow would go without the isolation (the default of checkpointsRoot()).
  const shadow = checkpointDirFor(ws.dir);
  const inHome = path.join(os.homedir(), '.local', 'state', 'huddle', 'checkpoints', path.basename(shadow));
  const wasInHome = existsSync(inHome);

  fake.script('lead', reply(toolUse('write_file', { path: 'hello.txt', content: 'hello\n' })), replyText('done'));
  const run = await runCli(['-p', 'write hello'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url }, timeoutMs: 60_000 });
  expect(run.code, run.stderr).toBe(0);
  expect(readFileSync(path.join(ws.dir, 'hello.txt'), 'utf8')).toBe('hello\n');

  expect(shadow.startsWith(path.join(state!, 'huddle', 'checkpoints') + path.sep)).toBe(true);
  expect(existsSync(path.join(shadow, 'shadow.git', 'HEAD'))).toBe(true);
  expect(readFileSync(path.join(shadow, 'workspace'), 'utf8')).toBe(`${ws.dir}\n`);
  if (!wasInHome) expect(existsSync(inHome)).toBe(false);
});
