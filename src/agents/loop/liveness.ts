// Status reasons that say why (the roster's `status_reason`): what a working agent is on, and
// since when an idle one has been waiting, so /team answers "is it stuck?" at a glance.

/** Wall-clock HH:MM (local time), as a person reads it off the roster. */
export function clockTime(at: Date = new Date()): string {
  return `${String(at.getHours()).padStart(2, '0')}:${String(at.getMinutes()).padStart(2, '0')}`;
}

/** `waiting for work since 14:02` */
export function waitingSince(what: string, at: Date = new Date()): string {
  return `${what} since ${clockTime(at)}`;
}

/** `task #3: <subject>` — the reason of a teammate working on a task it took. */
export function onTask(task: { id: number; subject: string }, what = ''): string {
  const subject = task.subject.replace(/\s+/g, ' ').trim();
  const short = subject.length > 60 ? `${subject.slice(0, 59)}…` : subject;
  return `task #${task.id}${what ? ` (${what})` : ''}: ${short}`;
}
