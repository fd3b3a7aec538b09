// The sandbox's allow/deny lists, applied by address (docs/trust.md, "The sandbox's network"). A
// target is resolved once, here, and every address it resolves to is checked; the proxy then
// connects to the very address that passed, so a name that resolves differently a moment later
// (DNS rebinding) changes nothing. List entries:
//   `*`                    every host
//   `example.com`          that name, and (deny only) every address it resolves to
//   `*.example.com`        its subdomains, by name
//   `localhost`            this machine: 127.0.0.0/8, ::1, 0.0.0.0/8, ::, the host's own addresses
//   `10.0.0.0/8`, `fd00::/8`, an address in any spelling: by address (a loopback address on the
//                          deny-list denies this whole machine: 0.0.0.0 reaches 127.0.0.1 too)
// A name allowed by name never reaches this machine: `localhost` or the address must be allowed.
// With an allow-list a name is looked up only when a name entry (or `*`, or `localhost` for
// localhost's own names) lets it through: address entries match addresses, and names the sandbox may
// not reach never leave the machine as DNS queries.
import { lookup } from 'node:dns/promises';
import os from 'node:os';
import { formatAddress, inRange, isThisHost, parseAddress, parseRange, type IpAddress, type IpRange } from './network-address.js';

type Rule =
  | { kind: 'any'; text: string }
  | { kind: 'name'; name: string; text: string }
  | { kind: 'suffix'; suffix: string; text: string }
  | { kind: 'this-host'; text: string }
  | { kind: 'range'; range: IpRange; text: string }
  | { kind: 'nothing'; text: string };

export interface NetworkLists {
  allow?: readonly string[];
  deny?: readonly string[];
}

/** How names are resolved and what this machine's own addresses are (injected by tests). */
export interface Resolver {
  resolve(name: string): Promise<IpAddress[]>;
  interfaceAddresses(): IpAddress[];
}

export type Verdict = { ok: true; address: IpAddress; host: string } | { ok: false; reason: string };

/** A host name as resolvers take it (letters, digits, `-`, `_`, dots), lower case, without its trailing dot. */
export function normaliseName(text: string): string | undefined {
  const name = text.trim().toLowerCase().replace(/\.$/, '');
  return /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/.test(name) && name.length <= 253 ? name : undefined;
}

function parseRule(text: string, list: 'allow' | 'deny'): Rule | undefined {
  const entry = text.trim();
  if (entry === '*') return { kind: 'any', text };
  const name = normaliseName(entry);
  if (name === 'localhost' || name?.endsWith('.localhost')) return { kind: 'this-host', text };
  const range = parseRange(entry);
  if (range) {
    // Denying a loopback address denies this machine: 0.0.0.0, ::1 and 127.0.0.2 land there as well.
    const address = entry.includes('/') ? undefined : parseAddress(entry);
    if (list === 'deny' && address && isThisHost(address)) return { kind: 'this-host', text };
    return { kind: 'range', range, text };
  }
  if (entry.startsWith('*.')) {
    const suffix = normaliseName(entry.slice(2));
    return suffix ? { kind: 'suffix', suffix, text } : undefined;
  }
  return name ? { kind: 'name', name, text } : undefined;
}

/** Whether a list entry is a host name, `*.domain`, `*`, `localhost`, an address or a range (the settings check). */
export function isNetworkEntry(entry: string): boolean {
  return parseRule(entry, 'deny') !== undefined;
}

export const systemResolver: Resolver = {
  async resolve(name) {
    const found = await lookup(name, { all: true, verbatim: true });
    return found.map((a) => parseAddress(a.address)).filter((a): a is IpAddress => a !== undefined);
  },
  interfaceAddresses() {
    return Object.values(os.networkInterfaces())
      .flat()
      .map((i) => (i ? parseAddress(i.address) : undefined))
      .filter((a): a is IpAddress => a !== undefined);
  },
};

/** The lists, parsed once; `check` decides one target. */
export class NetworkRules {
  private readonly allow: Rule[];
  private readonly deny: Rule[];
  private deniedCache: { at: number; addresses: Promise<Map<string, IpAddress[]>> } | undefined;

  constructor(
    lists: NetworkLists,
    private readonly resolver: Resolver = systemResolver,
  ) {
    this.allow = (lists.allow ?? []).map((e) => parseRule(e, 'allow')).filter((r): r is Rule => r !== undefined);
    this.deny = (lists.deny ?? []).map((e) => parseRule(e, 'deny')).filter((r): r is Rule => r !== undefined);
    // An allow-list of nothing but invalid entries allows nothing (not everything).
    if (!this.allow.length && (lists.allow ?? []).length) this.allow.push({ kind: 'nothing', text: '(no valid entry)' });
  }

  /** Whether `host` (a name or an address in any spelling) may be reached, and at which address. */
  async check(host: string): Promise<Verdict> {
    const literal = parseAddress(host);
    const name = literal ? undefined : normaliseName(host);
    if (!literal && !name) return { ok: false, reason: `${JSON.stringify(host)} is not a host name or address` };
    let addresses: IpAddress[];
    if (literal) addresses = [literal];
    else {
      // What the name alone decides is decided before any lookup: a sandbox may not use the proxy's
      // resolver to send names it may not reach out (DNS as a channel).
      const deniedByName = this.deny.find(
        (rule) => (rule.kind === 'name' || rule.kind === 'suffix' || rule.kind === 'any') && matches(rule, name, undefined, false),
      );
      if (deniedByName) return { ok: false, reason: `${name} is denied by the sandbox network settings (${deniedByName.text})` };
      const localName = name === 'localhost' || name!.endsWith('.localhost');
      const allowedByName = (rule: Rule) =>
        rule.kind === 'any' ||
        (localName && rule.kind === 'this-host') ||
        ((rule.kind === 'name' || rule.kind === 'suffix') && matches(rule, name, undefined, false));
      if (this.allow.length && !this.allow.some(allowedByName))
        return { ok: false, reason: `${name} is not on the sandbox network allow-list (${this.allow.map((r) => r.text).join(', ')})` };
      try {
        addresses = await this.resolver.resolve(name!);
      } catch {
        addresses = [];
      }
      if (!addresses.length) return { ok: false, reason: `${name} does not resolve` };
    }
    const local = this.resolver.interfaceAddresses();
    const deniedAddresses = await this.deniedNameAddresses();
    let firstRefusal: string | undefined;
    for (const address of addresses) {
      const canonical = formatAddress(address);
      const shown = name ? `${name} (${canonical})` : host === canonical ? host : `${host} (${canonical})`;
      const thisHost = isThisHost(address, local);
      const denied = this.deny.find(
        (rule) => matches(rule, name, address, thisHost) || (rule.kind === 'name' && deniedAddresses.get(rule.name)?.some((a) => a.value === address.value)),
      );
      if (denied) {
        firstRefusal ??= `${shown} is denied by the sandbox network settings (${denied.text})`;
        continue;
      }
      if (this.allow.length) {
        const allowed = this.allow.find((rule) => matches(rule, name, address, thisHost) && !(thisHost && (rule.kind === 'name' || rule.kind === 'suffix')));
        if (!allowed) {
          firstRefusal ??=
            thisHost && this.allow.some((rule) => matches(rule, name, address, thisHost))
              ? `${shown} is this machine, which a name on the allow-list does not reach (allow localhost or the address)`
              : `${shown} is not on the sandbox network allow-list (${this.allow.map((r) => r.text).join(', ')})`;
          continue;
        }
      }
      return { ok: true, address, host: name ?? formatAddress(address) };
    }
    return { ok: false, reason: firstRefusal! };
  }

  /** What the deny-list's plain names resolve to (looked up again after a minute): an address of theirs is denied however it is written. */
  private deniedNameAddresses(): Promise<Map<string, IpAddress[]>> {
    const now = Date.now();
    if (!this.deniedCache || now - this.deniedCache.at > 60_000) this.deniedCache = { at: now, addresses: this.resolveDenied() };
    return this.deniedCache.addresses;
  }

  private async resolveDenied(): Promise<Map<string, IpAddress[]>> {
    const out = new Map<string, IpAddress[]>();
    await Promise.all(
      this.deny
        .filter((rule): rule is Extract<Rule, { kind: 'name' }> => rule.kind === 'name')
        .map(async (rule) => out.set(rule.name, await this.resolver.resolve(rule.name).catch(() => []))),
    );
    return out;
  }
}

function matches(rule: Rule, name: string | undefined, address: IpAddress | undefined, thisHost: boolean): boolean {
  switch (rule.kind) {
    case 'any':
      return true;
    case 'this-host':
      return thisHost;
    case 'range':
      return address !== undefined && inRange(address, rule.range);
    case 'name':
      return name === rule.name;
    case 'suffix':
      return name !== undefined && name.endsWith(`.${rule.suffix}`);
    case 'nothing':
      return false;
  }
}
