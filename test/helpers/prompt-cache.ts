/**
 * The Messages API's prompt-caching rules, simulated for the fake API (fake-api.ts) and the
 * caching benchmark, so that what a client is billed can be measured offline:
 *
 * - A request is a sequence of blocks in prefix order: every tool, every system block, then every
 *   content block of every message (a string content is one block). A block's tokens are estimated
 *   from its JSON without `cache_control` (~4 characters a token).
 * - A block with `cache_control` is a breakpoint; a top-level `cache_control` (automatic caching)
 *   is one on the last block. More than 4 breakpoints is an error (the API answers 400).
 * - Reads: for each breakpoint, the block boundaries from it back to 20 blocks before it are looked
 *   up; the longest prefix written earlier (and not expired) is read, billed at 0.1×.
 * - Writes: the prefix at each breakpoint past the read, of at least `minTokens` (1,024) tokens, is
 *   written (billed 1.25× for the 5-minute TTL): from the end of the read to the last such breakpoint.
 * - Everything else is input at full price. An entry lives `ttlMs` (5 minutes) from its last use.
 *
 * Only `node:` built-ins and erasable TypeScript: Node loads this file directly (type stripping).
 */
import { createHash } from 'node:crypto';

export const MAX_BREAKPOINTS = 4;
export const DEFAULT_MIN_CACHE_TOKENS = 1024;
export const LOOKBACK_BLOCKS = 20;
export const CACHE_TTL_MS = 5 * 60_000;

export interface CacheBlock {
  /** Where it is: `tool:<name>`, `system:<i>`, `message:<i>:<j>:<role>`. */
  where: string;
  tokens: number;
  breakpoint: boolean;
}

export interface CacheAccount {
  /** Every input token of the request. */
  total: number;
  /** Read from the cache (billed 0.1×). */
  read: number;
  /** Written to the cache (billed 1.25×). */
  written: number;
  /** The rest, at full price: total − read − written. */
  uncached: number;
  breakpoints: number;
}

export class CacheRuleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CacheRuleError';
  }
}

export interface PromptCacheOptions {
  minTokens?: number;
  lookback?: number;
  ttlMs?: number;
  now?: () => number;
}

/** Estimated tokens of a piece of JSON (the same rule for every client measured). */
export function tokensOf(value: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(value).length / 4));
}

function withoutCacheControl(block: unknown): unknown {
  if (!block || typeof block !== 'object' || !('cache_control' in block)) return block;
  const { cache_control: _omit, ...rest } = block as Record<string, unknown>;
  return rest;
}

function hasCacheControl(block: unknown): boolean {
  return Boolean(block && typeof block === 'object' && (block as Record<string, unknown>)['cache_control']);
}

interface Flat {
  blocks: CacheBlock[];
  /** The prefix hash after each block. */
  hashes: string[];
}

/** The request's blocks in prefix order, with the hash of the prefix ending at each. */
export function flattenRequest(body: any): Flat {
  const blocks: CacheBlock[] = [];
  const hashes: string[] = [];
  let hash = createHash('sha256')
    .update(String(body?.model ?? ''))
    .digest('hex');
  const push = (where: string, block: unknown, salt: string): void => {
    const plain = withoutCacheControl(block);
    hash = createHash('sha256').update(hash).update(salt).update(JSON.stringify(plain)).digest('hex');
    blocks.push({ where, tokens: tokensOf(plain), breakpoint: hasCacheControl(block) });
    hashes.push(hash);
  };
  for (const tool of Array.isArray(body?.tools) ? body.tools : []) push(`tool:${String(tool?.name)}`, tool, 'tool');
  const system = body?.system;
  if (typeof system === 'string' && system) push('system:0', { type: 'text', text: system }, 'system');
  else if (Array.isArray(system)) system.forEach((block: unknown, i: number) => push(`system:${i}`, block, 'system'));
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  messages.forEach((message, i) => {
    const role = String(message?.role);
    const content = typeof message?.content === 'string' ? [{ type: 'text', text: message.content }] : Array.isArray(message?.content) ? message.content : [];
    // The role and the message boundary are part of the prefix: the same block in another turn is another prefix.
    content.forEach((block: unknown, j: number) => push(`message:${i}:${j}:${role}`, block, `${role}:${j === 0 ? 'start' : 'cont'}`));
  });
  if (body?.cache_control && blocks.length) blocks[blocks.length - 1]!.breakpoint = true;
  return { blocks, hashes };
}

/** One cache, as the API keeps one per organisation and model (the model is part of every prefix). */
export class PromptCache {
  readonly #entries = new Map<string, number>();
  readonly #minTokens: number;
  readonly #lookback: number;
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(options: PromptCacheOptions = {}) {
    this.#minTokens = options.minTokens ?? DEFAULT_MIN_CACHE_TOKENS;
    this.#lookback = options.lookback ?? LOOKBACK_BLOCKS;
    this.#ttlMs = options.ttlMs ?? CACHE_TTL_MS;
    this.#now = options.now ?? Date.now;
  }

  /** Bills one request and updates the cache; throws CacheRuleError where the API answers 400. */
  account(body: any): CacheAccount {
    const { blocks, hashes } = flattenRequest(body);
    const cumulative: number[] = [];
    let sum = 0;
    for (const block of blocks) cumulative.push((sum += block.tokens));
    const total = sum;
    const breakpoints = blocks.flatMap((block, i) => (block.breakpoint ? [i] : []));
    if (breakpoints.length > MAX_BREAKPOINTS) {
      throw new CacheRuleError(`A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${breakpoints.length}.`);
    }
    const now = this.#now();
    for (const [key, expires] of this.#entries) if (expires <= now) this.#entries.delete(key);

    // The longest earlier-written prefix within the lookback window of any breakpoint.
    let readAt = -1;
    for (const b of breakpoints) {
      for (let j = b; j >= 0 && j >= b - this.#lookback; j--) {
        if (j > readAt && this.#entries.has(hashes[j]!)) {
          readAt = j;
          break;
        }
      }
    }
    const read = readAt >= 0 ? cumulative[readAt]! : 0;
    if (readAt >= 0) this.#entries.set(hashes[readAt]!, now + this.#ttlMs);

    let writtenTo = readAt;
    for (const b of breakpoints) {
      if (b <= readAt || cumulative[b]! < this.#minTokens) continue;
      this.#entries.set(hashes[b]!, now + this.#ttlMs);
      writtenTo = Math.max(writtenTo, b);
    }
    const written = writtenTo > readAt ? cumulative[writtenTo]! - read : 0;
    return { total, read, written, uncached: total - read - written, breakpoints: breakpoints.length };
  }

  /** Forgets everything (a new organisation, or the TTL passed). */
  clear(): void {
    this.#entries.clear();
  }
}

/** Input billed in full-price token units: input + 1.25 × written + 0.1 × read. */
export function billedInput(account: Pick<CacheAccount, 'uncached' | 'written' | 'read'>): number {
  return account.uncached + 1.25 * account.written + 0.1 * account.read;
}
