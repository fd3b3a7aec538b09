// Message-bus wake latency: from the moment a sender calls send() until a waiter blocked in
// waitForMessage() runs again. In one process the wake is an in-process event; across processes
// it is the receiver's fs.watch on the inbox directory (plus its 3 ms debounce).
import { fork } from 'node:child_process';
import path from 'node:path';
import { FileBus } from '../src/runtime/store/file/file-bus.js';
import { type BenchResult, BUNDLE_DIR, log, percentile, result, spread, tempDir } from './lib.js';

export async function benchBusInProcess(samples = 500, warmup = 20): Promise<BenchResult[]> {
  const ws = tempDir('huddle-bench-bus-');
  const bus = new FileBus(path.join(ws.dir, 'inbox'), { knownNames: () => ['waiter', 'sender'] });
  const latencies: number[] = [];
  try {
    for (let i = 0; i < warmup + samples; i++) {
      let resumedAt = 0;
      const waiting = bus.waitForMessage('waiter').then(() => {
        resumedAt = performance.now();
      });
      // Let the waiter finish its first look (empty inbox) and block.
      await new Promise((resolve) => setImmediate(resolve));
      const sentAt = performance.now();
      const sending = bus.send({ from: 'sender', to: 'waiter', content: `ping ${i}` });
      await waiting;
      await sending;
      if (i >= warmup) latencies.push(resumedAt - sentAt);
      const got = await bus.take('waiter');
      if (got.length !== 1) throw new Error(`expected one message, took ${got.length}`);
    }
  } finally {
    bus.close();
    ws.cleanup();
  }
  log(`bus in-process: p50 ${percentile(latencies, 50).toFixed(2)} ms, p95 ${percentile(latencies, 95).toFixed(2)} ms`);
  const detail = spread(latencies, 3);
  return [
    result({ name: 'bus wake, in-process: p50', value: percentile(latencies, 50), unit: 'ms', samples, stat: 'p50, send() start → waiter resumed', detail }),
    result({
      name: 'bus wake, in-process: p95',
      value: percentile(latencies, 95),
      unit: 'ms',
      target: 20,
      samples,
      stat: 'p95, send() start → waiter resumed',
      detail,
    }),
  ];
}

interface SenderReply {
  sent?: number;
  ready?: boolean;
  error?: string;
}

/**
 * A forked child (bench/children/bus-sender.ts) sends; this process waits. The child stamps each
 * message with process.hrtime.bigint() taken just before send() — CLOCK_MONOTONIC, the same clock
 * in both processes — and the waiter subtracts it from its own reading when it resumes.
 */
export async function benchBusAcrossProcesses(samples = 100, warmup = 10): Promise<BenchResult[]> {
  const ws = tempDir('huddle-bench-bus-x-');
  const inbox = path.join(ws.dir, 'inbox');
  const bus = new FileBus(inbox, { knownNames: () => ['parent', 'child'] });
  const child = fork(path.join(BUNDLE_DIR, 'bus-sender.mjs'), [inbox], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const replies: SenderReply[] = [];
  let notify: (() => void) | undefined;
  child.on('message', (message: SenderReply) => {
    replies.push(message);
    notify?.();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const nextReply = async (): Promise<SenderReply> => {
    while (replies.length === 0) {
      await Promise.race([new Promise<void>((resolve) => (notify = resolve)), exited.then(() => Promise.reject(new Error('the sender child exited')))]);
    }
    const reply = replies.shift()!;
    if (reply.error) throw new Error(`sender child: ${reply.error}`);
    return reply;
  };
  const latencies: number[] = [];
  try {
    await nextReply(); // ready
    for (let i = 0; i < warmup + samples; i++) {
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(new Error('no wake-up within 5 s')), 5000);
      let resumedAt = 0n;
      const waiting = bus.waitForMessage('parent', abort.signal).then(() => {
        resumedAt = process.hrtime.bigint();
      });
      child.send({ go: i });
      await waiting;
      clearTimeout(timer);
      await nextReply(); // the child's send() returned
      const got = await bus.take('parent');
      if (got.length !== 1) throw new Error(`expected one message, took ${got.length}`);
      const sentAt = BigInt(got[0]!.content);
      if (i >= warmup) latencies.push(Number(resumedAt - sentAt) / 1e6);
    }
  } finally {
    child.send({ quit: true });
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 2000))]);
    if (child.exitCode === null) child.kill();
    bus.close();
    ws.cleanup();
  }
  log(`bus across processes: p50 ${percentile(latencies, 50).toFixed(2)} ms, p95 ${percentile(latencies, 95).toFixed(2)} ms`);
  const detail = spread(latencies, 3);
  const note = 'wake via fs.watch (inotify) on the inbox directory; includes the 3 ms debounce';
  return [
    result({
      name: 'bus wake, across processes: p50',
      value: percentile(latencies, 50),
      unit: 'ms',
      samples,
      stat: 'p50, send() start in child → waiter resumed in parent',
      note,
      detail,
    }),
    result({
      name: 'bus wake, across processes: p95',
      value: percentile(latencies, 95),
      unit: 'ms',
      target: 20,
      samples,
      stat: 'p95, send() start in child → waiter resumed in parent',
      note,
      detail,
    }),
  ];
}
