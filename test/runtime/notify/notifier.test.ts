// What the notifier writes, read back by a real terminal emulator (xterm's parser): its bell, its
// title changes and the OSC 9 / OSC 777 notifications as a terminal would receive them.
import xterm from '@xterm/headless';
import { describe, expect, it } from 'vitest';
import { needsYouTitle, Notifier, type Notification, type NotifierOptions } from '../../../src/runtime/notify/notifier.js';
import { tmuxPassThrough } from '../../../src/runtime/notify/terminal-sequences.js';

const { Terminal } = xterm;

/** A headless terminal that records what a person would be shown. */
function terminal() {
  const term = new Terminal({ allowProposedApi: true, cols: 80, rows: 5 });
  const seen = { bells: 0, titles: [] as string[], osc9: [] as string[], osc777: [] as string[] };
  term.onBell(() => (seen.bells += 1));
  term.onTitleChange((title) => seen.titles.push(title));
  term.parser.registerOscHandler(9, (data) => (seen.osc9.push(data), true));
  term.parser.registerOscHandler(777, (data) => (seen.osc777.push(data), true));
  const feed = (text: string) => new Promise<void>((resolve) => term.write(text, resolve));
  return { term, seen, feed };
}

function notifier(options: Partial<NotifierOptions> = {}) {
  const written: string[] = [];
  const hooked: Notification[] = [];
  let clock = 0;
  const n = new Notifier({ write: (text) => written.push(text), env: {}, onNotify: (x) => hooked.push(x), now: () => clock, ...options });
  return { n, written, hooked, advance: (ms: number) => (clock += ms) };
}

describe('notifications', () => {
  it('rings the bell and sends an OSC 9 desktop notification by default, and tells the Notification hook', async () => {
    const { n, written, hooked } = notifier();
    expect(n.notify({ kind: 'approval', message: 'alice waits for approval: rm -rf build' })).toBe(true);
    const { seen, feed } = terminal();
    await feed(written.join(''));
    expect(seen.bells).toBe(1);
    expect(seen.osc9).toEqual(['huddle: alice waits for approval: rm -rf build']);
    expect(hooked).toEqual([{ kind: 'approval', message: 'alice waits for approval: rm -rf build' }]);
  });

  it('uses OSC 777 where the terminal speaks it, keeps control characters out, and passes through tmux', async () => {
    const { n, written } = notifier({ env: { TERM: 'foot' } });
    n.notify({ kind: 'failure', title: 'huddle; demo', message: 'bob failed:\n\x1b]2;pwned\x07 model error' });
    const { seen, feed } = terminal();
    await feed(written.join(''));
    expect(seen.osc777).toEqual(['notify;huddle, demo;bob failed: ]2;pwned model error']);
    expect(seen.titles).toEqual([]);

    const inTmux = notifier({ env: { TMUX: '/tmp/tmux-1000/default,1,0' } });
    inTmux.n.notify({ kind: 'done', message: 'the team finished' });
    const raw = inTmux.written.join('');
    expect(raw).toBe(`\x07${tmuxPassThrough('\x1b]9;huddle: the team finished\x07')}`);
    expect(raw).toContain('\x1bPtmux;\x1b\x1b]9;huddle: the team finished\x07\x1b\\');
  });

  it('follows the policy: events, bell and desktop settings, and no repeat of the same thing at once', () => {
    const quiet = notifier({ settings: { events: ['failure'], bell: false, desktop: 'osc777' } });
    expect(quiet.n.notify({ kind: 'done', message: 'done' })).toBe(false);
    expect(quiet.n.notify({ kind: 'failure', message: 'x' })).toBe(true);
    expect(quiet.written).toEqual(['\x1b]777;notify;huddle;x\x07']);
    expect(quiet.hooked.map((h) => h.kind)).toEqual(['failure']);

    const off = notifier({ settings: { desktop: 'off' } });
    off.n.notify({ kind: 'budget', message: 'the team budget ran out' });
    expect(off.written).toEqual(['\x07']);

    const repeat = notifier();
    expect(repeat.n.notify({ kind: 'plan', message: 'carol sent a plan' })).toBe(true);
    expect(repeat.n.notify({ kind: 'plan', message: 'carol sent a plan' })).toBe(false);
    repeat.advance(2_500);
    expect(repeat.n.notify({ kind: 'plan', message: 'carol sent a plan' })).toBe(true);
  });

  it('keeps the tab title at "needs you: N", writing only changes, and gives the old title back', async () => {
    const { n, written } = notifier();
    const { seen, feed } = terminal();
    await feed('\x1b]2;my shell\x07');
    n.setNeedsYou(0);
    n.setNeedsYou(2);
    n.setNeedsYou(2);
    n.setNeedsYou(0);
    expect(written.join('')).toBe('\x1b[22;0t\x1b]2;huddle\x07\x1b]2;huddle — needs you: 2\x07\x1b]2;huddle\x07');
    await feed(written.join(''));
    expect(seen.titles).toEqual(['my shell', 'huddle', 'huddle — needs you: 2', 'huddle']);
    n.restoreTitle();
    expect(written.at(-1)).toBe('\x1b[23;0t');
    expect(needsYouTitle(3)).toBe('huddle — needs you: 3');

    const untitled = notifier({ settings: { title: false } });
    untitled.n.setNeedsYou(4);
    expect(untitled.written).toEqual([]);
  });
});
