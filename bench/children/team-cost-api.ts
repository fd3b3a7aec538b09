// Forked by bench/team-cost.ts (bundled by scripts/bench.mjs): the fake Messages API with the team-cost
// script, in a process of its own so that the team's process measures huddle alone (on a real team the
// API is another machine). argv[2]: the pace as JSON, or "null". It replies {url} once listening, then
// {request} for every Messages request as it arrives (agent, and how the caching rules billed it),
// and closes on {quit}.
import { startFakeApi } from '../../test/helpers/fake-api.js';
import { respond, type Pace } from '../team-cost-script.js';

const send: NonNullable<typeof process.send> = process.send?.bind(process) ?? (() => false);
if (!process.send) throw new Error('usage: fork team-cost-api.mjs <pace JSON | null> with an IPC channel');
const pace = JSON.parse(process.argv[2] ?? 'null') as Pace | null;
const fake = await startFakeApi();
fake.respond((request) => {
  if (request.path !== '/v1/messages') return undefined;
  send({ request: { agent: request.agent, path: request.path, cache: request.cache } });
  return respond(request, pace ?? undefined);
});
process.on('message', (message: { quit?: boolean }) => {
  if (message.quit) void fake.close().then(() => process.disconnect?.());
});
send({ url: fake.url });
