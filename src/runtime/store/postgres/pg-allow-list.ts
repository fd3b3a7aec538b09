// The ask-mode allow-list of a team in PostgreSQL: what this checkout's settings files allow
// (read afresh on each check, as with the file backend), plus the person's "always allow"
// answers, which are kept in the database so that they hold on every host of the team.
import { SettingsAllowList } from '../../settings/settings-allow-list.js';
import type { AllowList, AllowListEntries } from '../allow-list.js';
import { type PgContext, write } from './pg-context.js';

interface SharedAllow {
  entries: string[];
  unsubscribe: () => void;
}

const SHARED_KEY = 'allow';

export class PgAllowList implements AllowList {
  readonly #ctx: PgContext;
  readonly #settings: SettingsAllowList;
  readonly #shared: SharedAllow;

  private constructor(ctx: PgContext, settings: SettingsAllowList, shared: SharedAllow) {
    this.#ctx = ctx;
    this.#settings = settings;
    this.#shared = shared;
  }

  static async open(ctx: PgContext, cwd: string): Promise<PgAllowList> {
    let shared = ctx.channel.shared.get(SHARED_KEY) as SharedAllow | undefined;
    if (!shared) {
      const state: SharedAllow = { entries: [], unsubscribe: () => undefined };
      ctx.channel.shared.set(SHARED_KEY, (shared = state));
      const reload = () => void load(ctx, state).catch(() => undefined);
      const offChange = ctx.channel.on('a', (change, remote) => {
        if (remote && change.allow) reload();
      });
      const offResync = ctx.channel.onResync(reload);
      state.unsubscribe = () => {
        offChange();
        offResync();
      };
      await load(ctx, state);
    }
    return new PgAllowList(ctx, new SettingsAllowList({ cwd }), shared);
  }

  read(): AllowListEntries {
    const local = this.#settings.read();
    const entries = [...local.entries];
    for (const prefix of this.#shared.entries) if (!entries.includes(prefix)) entries.push(prefix);
    return local.error ? { entries, error: local.error } : { entries };
  }

  async add(prefixes: string[]): Promise<string[]> {
    const known = new Set(this.read().entries);
    const wanted = prefixes.filter((prefix) => prefix.trim() && !known.has(prefix) && (known.add(prefix), true));
    if (!wanted.length) return [];
    const { team, channel } = this.#ctx;
    const added = await write(this.#ctx, async (client) => {
      const out: string[] = [];
      for (const prefix of wanted) {
        const { rows } = await client.query('INSERT INTO huddle_allow (team, prefix) VALUES ($1, $2) ON CONFLICT (team, prefix) DO NOTHING RETURNING prefix', [
          team,
          prefix,
        ]);
        if (rows.length) out.push(prefix);
      }
      if (out.length) await channel.publish(client, { k: 'a', allow: true });
      return out;
    });
    await load(this.#ctx, this.#shared);
    return added;
  }
}

async function load(ctx: PgContext, shared: SharedAllow): Promise<void> {
  const { rows } = await ctx.db.query<{ prefix: string }>('SELECT prefix FROM huddle_allow WHERE team = $1 ORDER BY position', [ctx.team]);
  shared.entries = rows.map((row) => row.prefix);
}
