// huddle as a library (docs/library.md): open a team on a workspace, spawn agents, create and watch
// tasks, send and receive messages, follow the typed event stream, approve, interrupt, close.
// Everything exported here is covered by semver (docs/library.md#stability); nothing else is.
export { openTeam } from './open-team.js';
export { Team } from './team.js';
export { HuddleError } from './errors.js';
export type * from './types.js';
