// Claims are atomic across processes: two processes with four claimers each race over 1,000
// tasks, and every task is claimed exactly once, by the claimer whose name is in its file.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bundleFixture } from '../fixtures/bundle.js';
import { FileBoard } from '../../../../../src/runtime/store/file/board/file-board.js';
import { type Task } from '../../../../../src/runtime/store/board.js';

const TASKS = 1_000;
const PROCESSES = 2;
const CLAIMERS = 4;

let root: string;
let worker: string;

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'huddle-race-'));
  worker = await bundleFixture('claim-worker');
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Started {
  name: string;
  out: string;
  ready: Promise<void>;
  exit: Promise<number | null>;
  go(): void;
}

function startWorker(dir: string, name: string): Started {
  const out = path.join(root, `${name}.json`);
  const child = spawn(process.execPath, [worker, JSON.stringify({ mode: 'claim', dir, name, claimers: CLAIMERS, out })], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const ready = new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stdout.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('ready\n')) resolve();
    });
    void exit.then((code) => reject(new Error(`worker ${name} exited with ${code} before it was ready`)));
  });
  return { name, out, ready, exit, go: () => child.stdin.end('go\n') };
}

it(`${PROCESSES} processes × ${CLAIMERS} claimers over ${TASKS} tasks: every task claimed exactly once`, async () => {
  const dir = path.join(root, '.tasks');
  const board = new FileBoard(dir, { agent: 'lead' });
  const createStart = performance.now();
  for (let i = 1; i <= TASKS; i++) await board.create({ subject: `task ${i}` }, 'lead');
  const createMs = performance.now() - createStart;
  expect((await board.claimable()).length).toBe(TASKS);

  const workers = Array.from({ length: PROCESSES }, (_, i) => startWorker(dir, `p${i + 1}`));
  await Promise.all(workers.map((w) => w.ready));
  const raceStart = performance.now();
  for (const w of workers) w.go();
  expect(await Promise.all(workers.map((w) => w.exit))).toEqual(workers.map(() => 0));
  const raceMs = performance.now() - raceStart;

  const reports = workers.map((w) => ({
    name: w.name,
    ...(JSON.parse(readFileSync(w.out, 'utf8')) as { claims: { id: number; owner: string }[]; ms: number }),
  }));
  const all = reports.flatMap((r) => r.claims);
  const ids = all.map((c) => c.id);
  // No overlap: as many claims as distinct ids; union: exactly 1..TASKS.
  expect(new Set(ids).size).toBe(ids.length);
  expect([...ids].sort((a, b) => a - b)).toEqual(Array.from({ length: TASKS }, (_, i) => i + 1));
  // Each claim was reported by a claimer of the process that made it.
  for (const r of reports) for (const c of r.claims) expect(c.owner.startsWith(`${r.name}-c`)).toBe(true);
  // The files agree with the reports.
  const tasks = new Map((await board.list()).map((t): [number, Task] => [t.id, t]));
  for (const c of all) expect(tasks.get(c.id)).toMatchObject({ status: 'in_progress', owner: c.owner });
  expect(await board.claimable()).toEqual([]);

  const split = reports.map((r) => `${r.name}: ${r.claims.length} claims in ${r.ms} ms`).join(', ');
  console.log(`created ${TASKS} tasks in ${Math.round(createMs)} ms; race took ${Math.round(raceMs)} ms (${split})`);
}, 60_000);
