// A module constant built on its first use instead of when the module is evaluated: every huddle start evaluates
// every module on its path, so a zod schema or parsed table only some runs need (a task record, a loopback
// range) would otherwise be paid by all of them before the first model request (bench/README.md).

/** `build` runs once, at the first call; later calls return what it returned. */
export function lazy<T>(build: () => T): () => T {
  let built: { value: T } | undefined;
  return () => (built ??= { value: build() }).value;
}
