// Mouse reports (the wheel) from the terminal. Ink drops them before useInput sees them (they map
// to no key it knows), so they are taken out of what Ink reads from stdin, here, and handed on as
// key presses (src/tui/keys/key-press.ts names them). A report split across two reads reaches Ink
// whole and is dropped by it: a lost wheel notch, never stray text in the input.
import { useStdin } from 'ink';
import { useEffect } from 'react';

// ESC [ < button ; column ; row M (press) or m (release): the SGR form turned on by useMouseReporting.
const SGR_REPORT = /\x1b\[<\d+;\d+;\d+[Mm]/g;

export function useMouseReports(onReport: (report: string) => void): void {
  const { stdin } = useStdin();
  useEffect(() => {
    const original = stdin.read;
    // Ink reads in a loop until read() returns null; every chunk passes through here first.
    stdin.read = function (this: typeof stdin, ...args: Parameters<typeof original>) {
      const chunk: unknown = original.apply(this, args);
      if (chunk === null || chunk === undefined) return chunk as unknown as ReturnType<typeof original>;
      const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk);
      if (!text.includes('\x1b[<')) return chunk as ReturnType<typeof original>;
      const reports = text.match(SGR_REPORT) ?? [];
      for (const report of reports) onReport(report.slice(1));
      return text.replace(SGR_REPORT, '') as ReturnType<typeof original>;
    } as typeof original;
    return () => {
      stdin.read = original;
    };
  }, [stdin, onReport]);
}
