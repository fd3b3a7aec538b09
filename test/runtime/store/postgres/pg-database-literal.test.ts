// The literals a multi-statement write inlines its values as are exactly node-postgres's own
// (docs/postgresql-managed.md#commits-and-the-disk): quotes and backslashes doubled, E'' when a backslash is there.
import pg from 'pg';
import { expect, it } from 'vitest';
import { literal } from '../../../../src/runtime/store/postgres/pg-database.js';

it("makes the literal pg's escapeLiteral makes, for quotes, backslashes, JSON and the rest", () => {
  const samples = [
    '',
    'plain',
    "it's",
    "''",
    '\\',
    'a\\b',
    "O'Brien \\ done",
    '{"a":"b\\"c"}',
    'üñí 😀 \u0000x',
    "'; DROP TABLE x; --",
    `{"${'x'.repeat(5000)}":"'\\\\'"}`,
  ];
  for (const text of samples) expect(literal(text)).toBe(pg.Client.prototype.escapeLiteral.call(null, text));
});
