// The file backend's spend ledger (src/runtime/store/file/spend-ledger.ts): a line appended per model
// call. A process's own line, when nothing else was appended since its last read, is tallied as
// written rather than read back; a line another process appended in between is read, in file order.
import fs, { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventHub } from '../../../../src/runtime/events/events.js';
import { FileBoard } from '../../../../src/runtime/store/file/board/file-board.js';
import { FileSpendLedger } from '../../../../src/runtime/store/file/spend-ledger.js';
import { usageFields } from '../../../helpers/usage-event.js';

// Pass-through: counts the reads of the ledger file, changes nothing.
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  const readSync = vi.fn(actual.readSync);
  return { ...actual, default: { ...actual, readSync }, readSync };
});

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function teamDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'huddle-spend-'));
  dirs.push(dir);
  return dir;
}

/** One process's ledger: its own hub, the team's file. */
function process_(dir: string) {
  const hub = new EventHub();
  const ledger = new FileSpendLedger({ teamDir: dir, board: new FileBoard(path.join(dir, 'tasks')), hub });
  return { ledger, spend: (agent: string, usd: number) => hub.emit(agent, 'usage', usageFields(usd, 10, 5)) };
}

describe('FileSpendLedger', () => {
  it("tallies a lone process's own lines as written, without reading the file back", async () => {
    const dir = teamDir();
    const here = process_(dir);
    here.spend('alice', 0.1); // the first usage of an agent waits for its board lookup
    await here.ledger.flush();
    vi.mocked(fs.readSync).mockClear();
    for (let i = 0; i < 5; i++) here.spend('alice', 0.1);
    await here.ledger.flush();
    expect(here.ledger.data.agents.alice).toMatchObject({ model_calls: 6, input_tokens: 60, output_tokens: 30 });
    expect(here.ledger.data.agents.alice!.cost_usd).toBeCloseTo(0.6);
    expect(vi.mocked(fs.readSync)).not.toHaveBeenCalled();
    // Another reader of the file folds the same lines.
    expect(readFileSync(path.join(dir, 'spend.jsonl'), 'utf8').trim().split('\n')).toHaveLength(6);
    const reader = process_(dir);
    expect(reader.ledger.data).toEqual(here.ledger.data);
    await Promise.all([here.ledger.close(), reader.ledger.close()]);
  });

  it("reads another process's line appended in between, and its own after it, in file order", async () => {
    const dir = teamDir();
    const here = process_(dir);
    const there = process_(dir);
    here.spend('alice', 0.1);
    await here.ledger.flush();
    there.spend('bob', 0.2);
    await there.ledger.flush();
    here.spend('alice', 0.3);
    await here.ledger.flush();
    expect(here.ledger.data.agents).toMatchObject({ alice: { model_calls: 2 }, bob: { model_calls: 1 } });
    expect(here.ledger.data.agents.alice!.cost_usd).toBeCloseTo(0.4);
    expect(here.ledger.data.agents.bob!.cost_usd).toBeCloseTo(0.2);
    // The other process reads ours the same way, and a new reader sees what both see.
    expect(there.ledger.data).toEqual(here.ledger.data);
    expect(process_(dir).ledger.data).toEqual(here.ledger.data);
    await Promise.all([here.ledger.close(), there.ledger.close()]);
  });
});
