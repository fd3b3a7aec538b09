import { describe, expect, it } from 'vitest';
import { capOutput, OutputCollector } from '../../../src/runtime/process/output-cap.js';

const numbered = (count: number) => Array.from({ length: count }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

describe('capOutput', () => {
  it('leaves text that fits unchanged', () => {
    expect(capOutput('short\ntext\n')).toBe('short\ntext\n');
    const exact = 'x'.repeat(100);
    expect(capOutput(exact, 100)).toBe(exact);
  });

  it('keeps the head and the tail and says how much was cut', () => {
    const text = numbered(10_000);
    const capped = capOutput(text, 2_000);
    expect(capped.length).toBeLessThanOrEqual(2_000);
    expect(capped.startsWith('line 1\nline 2\n')).toBe(true);
    expect(capped.endsWith('line 9999\nline 10000\n')).toBe(true);
    const marker = capped.match(/\[… ([\d,]+) characters \(([\d,]+) lines\) cut from the middle …\]/);
    expect(marker).not.toBeNull();
    const cutChars = Number(marker![1]!.replace(/,/g, ''));
    const cutLines = Number(marker![2]!.replace(/,/g, ''));
    // Everything not kept is accounted for: kept text + cut = original.
    expect(capped.length - marker![0].length - 1 + cutChars).toBe(text.length);
    expect(capped.split('\n').length - 2 + cutLines).toBe(text.split('\n').length - 1);
    // Both halves get a fair share of the budget.
    const [head, tail] = capped.split(marker![0]);
    expect(head!.length).toBeGreaterThan(700);
    expect(tail!.length).toBeGreaterThan(700);
  });

  it('cuts text without newlines in the middle too', () => {
    const text = 'a'.repeat(50_000) + 'b'.repeat(50_000);
    const capped = capOutput(text);
    expect(capped.length).toBeLessThanOrEqual(30_000);
    expect(capped.startsWith('aaaa')).toBe(true);
    expect(capped.endsWith('bbbb')).toBe(true);
    expect(capped).toMatch(/\[… [\d,]+ characters cut from the middle …\]/);
  });

  it('does not split a surrogate pair', () => {
    const capped = capOutput('😀'.repeat(10_000), 1_000);
    expect(capped).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });
});

describe('OutputCollector', () => {
  it('gives the same result as capOutput on the whole stream, in bounded memory', () => {
    const text = numbered(50_000);
    for (const chunkSize of [1_000, 7_919, 65_536]) {
      const collector = new OutputCollector(5_000);
      for (let i = 0; i < text.length; i += chunkSize) collector.push(text.slice(i, i + chunkSize));
      expect(collector.text()).toBe(capOutput(text, 5_000));
    }
  });

  it('returns short streams whole', () => {
    const collector = new OutputCollector();
    collector.push('hello ');
    collector.push('world\n');
    expect(collector.text()).toBe('hello world\n');
  });
});
