// Ctrl+C or SIGTERM asks a face's run to stop and leave its team resumable; a second one exits at once.
/** A run stopped by Ctrl+C or SIGTERM exits 130 (128 + SIGINT), as shells report it. */
export const INTERRUPTED = 130;

/**
 * `interrupted` resolves at the first Ctrl+C or SIGTERM; a second one exits at once with INTERRUPTED.
 * Both signals keep a listener of ours after the first: signal-exit (execa's cleanup of a running child)
 * re-raises a signal it finds no other listener for, which would kill the process before its team is
 * left to --resume. `stop()` takes the first listeners away once the run is over.
 */
export function untilInterrupted(): { interrupted: Promise<'interrupted'>; stop(): void } {
  let onSignal!: () => void;
  const interrupted = new Promise<'interrupted'>((resolve) => {
    onSignal = () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      process.once('SIGINT', () => process.exit(INTERRUPTED));
      process.once('SIGTERM', () => process.exit(INTERRUPTED));
      resolve('interrupted');
    };
  });
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    interrupted,
    stop: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
