// A team run by a program through huddle's library (docs/library.md): a teammate is given a task,
// the lead watches over it, and the program follows the board and the messages until the run ends.
//
//   npm install huddle          (Node 22.18 or newer runs this file as it is: node team.ts DIR)
//   ANTHROPIC_API_KEY=… node team.ts ./my-project
import { openTeam, HuddleError, type Team } from 'huddle';

const workspace = process.argv[2] ?? process.cwd();

let team: Team;
try {
  // `fresh`: archive whatever team the workspace holds and start a new one.
  team = await openTeam({ workspace, fresh: true });
} catch (error) {
  // One line saying why (no credentials, another huddle on this team, settings to trust…).
  if (error instanceof HuddleError) {
    console.error(`huddle: ${error.message}`);
    process.exit(2);
  }
  throw error;
}

// Follow the board and the messages as they happen (ends when the team closes).
const following = (async () => {
  for await (const event of team.events('task', 'message_sent')) {
    if (event.type === 'task') console.log(`task #${event.task.id} ${event.action}: ${event.task.status}${event.task.owner ? ` (${event.task.owner})` : ''}`);
    else console.log(`${event.from} -> ${event.to}: ${event.content}`);
  }
})();

const task = await team.createTask({ subject: 'Write hello.txt', description: 'A file hello.txt that says hello.' });
// A teammate of huddle's own (agent: 'claude-code', 'codex', … runs an external CLI instead).
await team.spawn({ name: 'alice', role: 'coder', prompt: `Claim task #${task.id} and do it, then tell the lead.` });
await team.start(`alice is doing task #${task.id}. When she reports, check it and finish.`);

const done = await team.waitForTask(task.id);
const end = await team.untilDone();
await team.close();
await following;

console.log(
  JSON.stringify({ end: end.kind, task: { id: done.id, status: done.status, owner: done.owner }, lead: team.leadText(), costUsd: team.spend().costUsd }),
);
process.exitCode = end.kind === 'settled' ? 0 : 1;
