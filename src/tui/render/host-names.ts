// How the console names the hosts of a team across machines (a team on PostgreSQL).

/**
 * Short names for host ids (`<hostname>-<pid>-<random>`): the machine's name, unless two hosts
 * of the team share it (two workers on one machine), then the whole id.
 */
export function hostNames(hosts: ReadonlyArray<string | undefined>): Map<string, string> {
  const ids = [...new Set(hosts.filter((host): host is string => host !== undefined))];
  const machine = (id: string) => id.replace(/-\d+-[0-9a-f]+$/, '');
  const count = new Map<string, number>();
  for (const id of ids) count.set(machine(id), (count.get(machine(id)) ?? 0) + 1);
  return new Map(ids.map((id) => [id, count.get(machine(id)) === 1 ? machine(id) : id]));
}
