// The one error a program gets from openTeam() for a team that cannot be opened here: its message
// is one line saying why and what to do (the same line `huddle -p` prints before exiting 2).
export class HuddleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HuddleError';
  }
}
