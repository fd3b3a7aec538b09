// What starting an external agent as a teammate needs, in one module so that the team imports it on the first
// external teammate (Team.loadExternal): a team of huddle's own agents, and the console before one is spawned,
// never load the drivers, the model relay or the sandbox around another CLI.
export { ExternalTeammate } from './external-teammate.js';
export { externalSetup, huddleCliPath } from './setup.js';
export { teamChannel } from './huddle-tools.js';
