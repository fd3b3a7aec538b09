// The console under a word-at-a-time load: eight teammates each streaming 200 words a
// second as one text_delta per word (1,600 deltas a second in all), a teammate's pane in view, in a
// 120×40 PTY. What it costs per event: CPU of the huddle process tree, frames written a second, and
// resident memory. (bench/console.ts keeps the realistic-chunk load: 20 characters every 25 ms.)
import { type Scripted, reply, replyText, startFakeApi, text, toolUse } from '../test/helpers/fake-api.js';
import { Console, INPUT_HINT } from './console.js';
import { type BenchResult, log, result, round, sleep, treeCpuSeconds, treeRssBytes, until } from './lib.js';

const STREAMERS = ['t1', 't2', 't3', 't4', 't5', 't6', 't7', 't8'];
/** Deltas a second per stream (one every 5 ms): 200, about 185 words. */
const WORDS_PER_SECOND = 200;
/** Each stream lasts about this long, so that all eight overlap for the whole window. */
const STREAM_SECONDS = 14;
const WINDOW_MS = 10_000;
const RAMP_MS = 1_000;
/** Every word is four letters and a space (or a line break): one text_delta of five characters. The
 * numbered word that starts a line is nine letters and a space, two deltas: 13 deltas make 12 words. */
const WORD = 5;
const VOCABULARY = ['tick', 'tock', 'beam', 'wire', 'node', 'pane', 'task', 'ship', 'code', 'test', 'lint', 'docs'];

/** `count` words, twelve to a line, each line starting with a numbered word ("t1-000041" is t1's line 41) so the screen shows progress. */
function words(who: string, count: number): string {
  let out = '';
  for (let i = 0; i < count; i++) {
    const word = i % 12 === 0 ? `${who}-${String(Math.floor(i / 12)).padStart(6, '0')}` : VOCABULARY[i % VOCABULARY.length]!;
    out += word + (i % 12 === 11 ? '\n' : ' ');
  }
  return out;
}

export async function benchConsoleWordStream(): Promise<BenchResult[]> {
  const fake = await startFakeApi();
  const counts = new Map<string, number>();
  const streamStart = new Map<string, number>();
  const perWordMs = 1000 / WORDS_PER_SECOND;
  const total = Math.ceil(STREAM_SECONDS * WORDS_PER_SECOND);
  fake.respond((request) => {
    const agent = request.agent ?? '';
    const n = (counts.get(agent) ?? 0) + 1;
    counts.set(agent, n);
    if (agent === 'lead') {
      if (n === 1) return reply(...STREAMERS.map((name) => toolUse('spawn_teammate', { name, role: 'coder', prompt: 'Write a long report, then go idle.' })));
      return replyText('Noted.');
    }
    if (STREAMERS.includes(agent)) {
      if (n === 1) {
        streamStart.set(agent, performance.now());
        const body: Scripted = { kind: 'message', content: [text(words(agent, total)), toolUse('idle', {})], delayMs: perWordMs, textChunk: WORD };
        return body;
      }
      return reply(toolUse('idle', {}));
    }
    return undefined;
  });

  const tty = new Console(fake, { HUDDLE_IDLE_TIMEOUT_MS: '600000' }, { cols: 120, rows: 40 });
  try {
    await tty.whenScreenShows(INPUT_HINT);
    await tty.driver.type('go');
    tty.driver.write('\r');
    // A teammate's pane in view: the pane whose stream is being drawn.
    await tty.driver.waitFor(/2:\S t1/, 30_000);
    tty.driver.write('\x1b2');
    await tty.driver.waitFor('t1 (coder)', 30_000);
    await until('all eight streams to begin', () => streamStart.size === 8, 30_000);
    const lastStart = Math.max(...streamStart.values());
    await sleep(Math.max(0, lastStart + RAMP_MS - performance.now()));

    const f0 = tty.frames;
    const b0 = tty.bytes;
    const cpu0 = treeCpuSeconds(tty.pid);
    const own0 = process.cpuUsage();
    const t0 = performance.now();
    let rssPeak = 0;
    const screens: string[] = [await tty.driver.screen()];
    while (performance.now() - t0 < WINDOW_MS) {
      await sleep(500);
      rssPeak = Math.max(rssPeak, treeRssBytes(tty.pid));
      if (screens.length === 1 && performance.now() - t0 >= WINDOW_MS / 2) screens.push(await tty.driver.screen());
    }
    const cpu1 = treeCpuSeconds(tty.pid);
    const t1 = performance.now();
    const own = process.cpuUsage(own0);
    screens.push(await tty.driver.screen());
    const seconds = (t1 - t0) / 1000;
    const cpuPercent = ((cpu1 - cpu0) / seconds) * 100;
    const framesPerSecond = (tty.frames - f0) / seconds;
    const bytesPerSecond = (tty.bytes - b0) / seconds;
    const endsAt = [...streamStart.values()].map((start) => start + total * perWordMs);
    const allStreaming = Math.min(...endsAt) >= t1;
    // The teammate's stream on screen, and moving: its numbered line markers (t1NN) grow.
    const lastLine = (screen: string) => Math.max(-1, ...[...screen.matchAll(/t1-(\d{6})/g)].map((m) => Number(m[1])));
    const progress = screens.map(lastLine);
    const visible = progress.every((line, i) => line >= 0 && (i === 0 || line > progress[i - 1]!));
    // What the fake API really delivered to t1 in the window (a loaded machine streams slower).
    const t1WordsPerSecond = ((progress.at(-1)! - progress[0]!) * 12) / seconds;
    log(
      `words: CPU ${cpuPercent.toFixed(1)} %, ${framesPerSecond.toFixed(1)} frames/s, ${(bytesPerSecond / 1024).toFixed(1)} KiB/s, ` +
        `RSS peak ${(rssPeak / 2 ** 20).toFixed(0)} MB; t1 lines on screen ${progress.join(' → ')} (${t1WordsPerSecond.toFixed(0)} words/s); all 8 streaming for the whole window: ${allStreaming}`,
    );
    if (!visible) log(`t1's stream did not visibly progress; the screen at the end:\n${screens.at(-1)}`);
    const detail = {
      windowSeconds: round(seconds, 3),
      deltasPerSecond: STREAMERS.length * WORDS_PER_SECOND,
      allEightStreamingForWholeWindow: allStreaming,
      teammateLineOnScreen: progress,
      t1WordsPerSecondOnScreen: round(t1WordsPerSecond, 0),
      streamVisible: visible,
      kibPerSecond: round(bytesPerSecond / 1024, 1),
      benchProcessCpuPercent: round(((own.user + own.system) / 1e6 / seconds) * 100, 1),
    };
    const stat = `over a ${(WINDOW_MS / 1000).toFixed(0)} s window, 8 teammates × ${WORDS_PER_SECOND} words/s (one delta a word), t1's pane in view, 120×40`;
    return [
      result({ name: 'console words ×8: CPU', value: cpuPercent, unit: '% core', target: 50, stat: `utime+stime of the huddle process tree ${stat}`, detail }),
      result({
        name: 'console words ×8: frames',
        value: framesPerSecond,
        unit: 'frames/s',
        target: 30,
        stat: `synchronized-update frames (ESC[?2026h) ${stat}`,
      }),
      result({
        name: 'console words ×8: RSS',
        value: rssPeak / 2 ** 20,
        unit: 'MB',
        target: 150,
        stat: `peak VmRSS of the huddle process tree, sampled every 0.5 s ${stat}`,
      }),
    ];
  } finally {
    await tty.close();
    await fake.close();
  }
}
