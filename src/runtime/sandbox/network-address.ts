// IP addresses as the kernel reads them, so that the sandbox's network rules hold by address and not
// by spelling (docs/trust.md, "The sandbox's network"): the IPv4 shorthands inet_aton and the URL
// standard accept (127.1, 2130706433, 0x7f.1, 0177.0.0.1), IPv6 in any of its forms, with a zone id
// or brackets, and IPv4 carried inside IPv6 (::ffff:127.0.0.1, ::ffff:7f00:1, ::127.0.0.1) all come
// out as one canonical address. Addresses are 128-bit numbers: an IPv4 address is its IPv4-mapped
// IPv6 form (::ffff:a.b.c.d), so one range check covers both families.
import { lazy } from '../lazy.js';

export interface IpAddress {
  family: 4 | 6;
  /** The 128-bit value; IPv4 as ::ffff:a.b.c.d. */
  value: bigint;
}

export interface IpRange {
  /** The first address of the range (host bits zero), 128-bit. */
  base: bigint;
  /** Prefix length in the 128-bit space (an IPv4 /8 is 104). */
  bits: number;
}

const V4_MAPPED = 0xffffn << 32n;
const ALL = (1n << 128n) - 1n;

/** One part of a dotted IPv4 address as inet_aton reads it: decimal, 0x hex or 0-led octal. */
function v4Part(part: string): bigint | undefined {
  if (/^0x[0-9a-f]*$/i.test(part)) return part.length === 2 ? 0n : BigInt(part);
  if (/^0[0-7]+$/.test(part)) return BigInt(`0o${part.slice(1)}`);
  if (/^(0|[1-9][0-9]*)$/.test(part)) return BigInt(part);
  return undefined;
}

/** An IPv4 address in any form inet_aton accepts (1 to 4 parts, the last filling the rest), or undefined. */
export function parseIPv4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length > 4 || parts.some((p) => p === '')) return undefined;
  const values = parts.map(v4Part);
  if (values.some((v) => v === undefined)) return undefined;
  let value = 0n;
  for (let i = 0; i < values.length - 1; i++) {
    if (values[i]! > 255n) return undefined;
    value |= values[i]! << BigInt(8 * (3 - i));
  }
  const last = values.at(-1)!;
  if (last >= 1n << BigInt(8 * (5 - values.length))) return undefined;
  return value | last;
}

/** The dotted IPv4 tail IPv6 allows (::ffff:127.0.0.1): four decimal bytes, no shorthands or leading zeros. */
const DOTTED_TAIL = /:((?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})$/;
const GROUP = /^[0-9a-f]{1,4}$/i;

/**
 * An IPv6 address (no brackets, no zone), as its 128-bit value, or undefined. Checked here rather
 * than by net.isIPv6, whose pattern takes milliseconds to build on first use, which every start
 * paid for the settings' default network lists.
 */
function parseIPv6(text: string): bigint | undefined {
  let head = text;
  let tail32: bigint | undefined;
  const dotted = DOTTED_TAIL.exec(text);
  if (dotted) {
    tail32 = parseIPv4(dotted[1]!);
    if (tail32 === undefined) return undefined;
    head = `${text.slice(0, dotted.index)}:0:0`;
  }
  const halves = head.split('::');
  if (halves.length > 2) return undefined;
  const [left = '', right] = halves;
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const l = groups(left);
  const r = right === undefined ? [] : groups(right);
  if (!l.every((g) => GROUP.test(g)) || !r.every((g) => GROUP.test(g))) return undefined;
  if (right === undefined ? l.length !== 8 : l.length + r.length > 7) return undefined;
  const all = right === undefined ? l : [...l, ...Array<string>(8 - l.length - r.length).fill('0'), ...r];
  let value = 0n;
  for (const group of all) value = (value << 16n) | BigInt(`0x${group}`);
  if (tail32 !== undefined) value = (value & ~0xffffffffn) | tail32;
  return value;
}

/** IPv4 carried in an IPv6 address (mapped, compatible, translated, NAT64's well-known prefix): the IPv4 part. */
function embeddedV4(value: bigint): bigint | undefined {
  const high96 = value >> 32n;
  const low = value & 0xffffffffn;
  if (high96 === 0xffffn) return low; // ::ffff:a.b.c.d, mapped
  if (high96 === 0n && low >= 1n << 24n) return low; // ::a.b.c.d, the old "compatible" form (not ::, ::1, ::2…)
  if (high96 === 0xffff0000n) return low; // ::ffff:0:a.b.c.d, translated
  if (high96 === 0x0064ff9b0000000000000000n) return low; // 64:ff9b::a.b.c.d, NAT64
  return undefined;
}

/**
 * An address in any spelling (brackets, zone id, trailing dot, case, IPv4 shorthands, IPv4 inside
 * IPv6), canonical; undefined when the text is not an address (a name, to be resolved).
 */
export function parseAddress(text: string): IpAddress | undefined {
  let host = text.trim().toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.includes(':')) {
    const value = parseIPv6(host.replace(/%.*$/, ''));
    if (value === undefined) return undefined;
    const v4 = embeddedV4(value);
    return v4 === undefined ? { family: 6, value } : { family: 4, value: V4_MAPPED | v4 };
  }
  // One trailing dot, as the URL standard and resolvers read it.
  const v4 = parseIPv4(host.endsWith('.') ? host.slice(0, -1) : host);
  return v4 === undefined ? undefined : { family: 4, value: V4_MAPPED | v4 };
}

/** The address as net.connect takes it (dotted IPv4, full IPv6). */
export function formatAddress(address: IpAddress): string {
  if (address.family === 4) {
    const v = address.value & 0xffffffffn;
    return [24n, 16n, 8n, 0n].map((shift) => String((v >> shift) & 0xffn)).join('.');
  }
  const groups: string[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(((address.value >> shift) & 0xffffn).toString(16));
  return groups.join(':');
}

/** `10.0.0.0/8`, `fd00::/8`, `::ffff:0:0/96`, or one address (a /32 or /128); undefined when it is neither. */
export function parseRange(text: string): IpRange | undefined {
  const slash = text.lastIndexOf('/');
  const addressText = slash < 0 ? text : text.slice(0, slash);
  const address = parseAddress(addressText);
  if (!address) return undefined;
  // IPv6 notation's prefix counts in 128 bits, IPv4's in 32 (then it is a range of mapped addresses).
  const v6Notation = addressText.includes(':');
  const max = v6Notation ? 128 : 32;
  let bits = max;
  if (slash >= 0) {
    const prefix = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) return undefined;
    bits = Number(prefix);
  }
  if (!v6Notation) bits += 96;
  // A prefix of 96 bits or more over IPv4 written inside IPv6 (::ffff:10.0.0.0/104) is that IPv4
  // range, where the addresses it is checked against are; a shorter one is kept as written.
  let value = address.value;
  if (v6Notation && address.family === 4 && bits < 96) value = parseIPv6(addressText.replace(/^\[|\]$/g, '').replace(/%.*$/, ''))!;
  return { base: value & mask(bits), bits };
}

function mask(bits: number): bigint {
  return bits === 0 ? 0n : (ALL << BigInt(128 - bits)) & ALL;
}

export function inRange(address: IpAddress, range: IpRange): boolean {
  return (address.value & mask(range.bits)) === range.base;
}

/**
 * This machine, however it is addressed: the loopback ranges (127.0.0.0/8, ::1), the "this host"
 * addresses a connect() also lands on (0.0.0.0/8, ::), and the host's own interface addresses.
 */
const loopbackRanges = lazy((): readonly IpRange[] => [parseRange('127.0.0.0/8')!, parseRange('0.0.0.0/8')!, parseRange('::1/128')!, parseRange('::/128')!]);

export function isThisHost(address: IpAddress, interfaceAddresses: readonly IpAddress[] = []): boolean {
  return loopbackRanges().some((range) => inRange(address, range)) || interfaceAddresses.some((a) => a.value === address.value);
}
