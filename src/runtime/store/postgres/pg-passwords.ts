// The database passwords a team's connection may use without the URL saying so: PGPASSWORD, and
// the lines of the password file (PGPASSFILE, else ~/.pgpass) that match the team URL's host, port,
// database and user as libpq matches them. huddle registers them as secrets (redacted from every
// tool result, event, record and screen: docs/trust.md); the sandbox hides the file and the variable.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Every password the connection to `connectionString` may be made with, besides the URL's own. */
export function teamPasswords(connectionString: string, env: NodeJS.ProcessEnv = process.env, home = os.homedir()): string[] {
  const out: string[] = [];
  if (env.PGPASSWORD) out.push(env.PGPASSWORD);
  const target = connectionTarget(connectionString, env);
  if (!target) return out;
  const file = env.PGPASSFILE || path.join(home, '.pgpass');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return out;
  }
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim() || line.trimStart().startsWith('#')) continue;
    const fields = splitPgpass(line);
    if (fields.length < 5) continue;
    const [host, port, database, user] = fields;
    const password = fields.slice(4).join(':');
    const matches = (pattern: string, ...values: string[]) => pattern === '*' || values.includes(pattern);
    if (matches(host!, ...target.hosts) && matches(port!, target.port) && matches(database!, target.database) && matches(user!, target.user) && password) {
      out.push(password);
    }
  }
  return out;
}

interface Target {
  hosts: string[];
  port: string;
  database: string;
  user: string;
}

function connectionTarget(connectionString: string, env: NodeJS.ProcessEnv): Target | undefined {
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    return undefined;
  }
  const decode = (text: string) => {
    try {
      return decodeURIComponent(text);
    } catch {
      return text;
    }
  };
  const host = decode(url.searchParams.get('host') ?? url.hostname) || env.PGHOST || 'localhost';
  // libpq matches a Unix socket connection (and the default) as localhost.
  const hosts = host.startsWith('/') ? ['localhost', host] : [host];
  const user = decode(url.username) || env.PGUSER || safeUserName();
  return {
    hosts,
    port: url.port || env.PGPORT || '5432',
    database: decode(url.pathname.replace(/^\//, '')) || env.PGDATABASE || user,
    user,
  };
}

function safeUserName(): string {
  try {
    return os.userInfo().username;
  } catch {
    return '';
  }
}

/** One ~/.pgpass line into its fields: `:` separates, `\:` and `\\` escape. */
function splitPgpass(line: string): string[] {
  const fields: string[] = [];
  let current = '';
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (ch === '\\' && i + 1 < line.length) {
      current += line[++i];
    } else if (ch === ':' && fields.length < 4) {
      fields.push(current);
      current = '';
    } else current += ch;
  }
  fields.push(current);
  return fields;
}
