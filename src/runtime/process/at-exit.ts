// What must happen however huddle's process ends (process.exit, an uncaught error, the end of the
// event loop): killing the process groups it started, removing its sockets and private dirs. One
// 'exit' listener runs it all. A listener per part (shells, commands, MCP servers, sockets, locks,
// helpers, the mouse) came to ten with a team open, and at eleven Node prints a warning about a
// possible leak to stderr: over the console's screen.
const callbacks = new Set<() => void>();
let listening = false;

/** Runs `callback` when the process exits (synchronously, as Node's 'exit' listeners run); returns what cancels it. */
export function atExit(callback: () => void): () => void {
  if (!listening) {
    listening = true;
    process.once('exit', runAll);
  }
  callbacks.add(callback);
  return () => {
    callbacks.delete(callback);
  };
}

function runAll(): void {
  // In the order they were asked for; one that throws must not keep the others from running.
  for (const callback of [...callbacks]) {
    try {
      callback();
    } catch {
      // The process is ending: there is nobody left to tell.
    }
  }
  callbacks.clear();
}
