// A team URL (docs/contract.md#command-line): `postgres://user:pass@host:port/db?team=NAME`. The `team` query
// parameter names the team (default: the workspace directory's name); several teams share one
// database. Everything else is node-postgres's own connection string (sslmode and all).
import { StoreUnavailableError } from './store-errors.js';

export interface TeamUrl {
  /** The connection string without `team` (what node-postgres gets). */
  connectionString: string;
  /** The team's key in the database. */
  team: string;
  /** The URL as a person may see it: no password. */
  display: string;
  /** The password, if the URL carries one (a secret: never written anywhere). */
  password: string | undefined;
  /** Every credential the URL carries: its password, and `password`/`sslpassword` in its query. */
  secrets: string[];
}

/** Query parameters node-postgres reads credentials from. */
const SECRET_PARAMS = ['password', 'sslpassword'];

/** Team names: what a directory name usually is, without control characters. */
const TEAM_NAME = /^[^\s\p{Cc}][^\p{Cc}]{0,127}$/u;

/** Parses a team URL; `defaultTeam` when it names none. StoreUnavailableError (one line) when it is not one. */
export function parseTeamUrl(text: string, defaultTeam: string): TeamUrl {
  const raw = text.trim();
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new StoreUnavailableError(`the team URL '${redactUrl(raw)}' is not a URL; use postgres://USER@HOST:PORT/DATABASE?team=NAME`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new StoreUnavailableError(
      `the team URL must start with postgres:// (it starts with ${url.protocol}//); use postgres://USER@HOST:PORT/DATABASE?team=NAME`,
    );
  }
  const team = (url.searchParams.get('team') ?? defaultTeam).trim();
  if (!TEAM_NAME.test(team)) {
    throw new StoreUnavailableError(`'${team}' cannot name a team: use up to 128 printable characters (…?team=NAME)`);
  }
  url.searchParams.delete('team');
  let password: string | undefined;
  try {
    password = url.password ? decodeURIComponent(url.password) : undefined;
  } catch {
    throw new StoreUnavailableError(
      `the password in the team URL '${redactUrl(raw)}' has a % that starts no escape: write % as %25 (and @ as %40, : as %3A, / as %2F)`,
    );
  }
  const secrets = [password, ...SECRET_PARAMS.map((name) => url.searchParams.get(name) ?? undefined)].filter((s): s is string => Boolean(s));
  const display = new URL(url.href);
  if (display.password) display.password = '***';
  for (const name of SECRET_PARAMS) if (display.searchParams.has(name)) display.searchParams.set(name, '***');
  display.searchParams.set('team', team);
  return { connectionString: url.href, team, display: display.href, password, secrets };
}

/**
 * The URL with its credentials hidden, for messages about a URL that may not even parse: the
 * password (up to the last @, as a raw @ in it would otherwise show its tail) and the query's.
 */
export function redactUrl(text: string): string {
  return text.replace(/(\/\/[^:/@]*:).*@/, '$1***@').replace(/([?&](?:ssl)?password=)[^&]*/gi, '$1***');
}
