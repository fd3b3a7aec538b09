// Forked by bench/claims.ts (bundled by scripts/bench.mjs): on {go}, runs `claimers` loops of
// claimNext on the board in `dir` until nothing is left, then reports the ids each loop won.
import { FileBoard } from '../../src/runtime/store/file/board/file-board.js';

const [dir, countArg, prefix = 'p'] = process.argv.slice(2);
const count = Number(countArg);
const send: NonNullable<typeof process.send> = process.send?.bind(process) ?? (() => false);
if (!dir || !Number.isInteger(count) || count < 1 || !process.send) {
  throw new Error('usage: fork claimer.mjs <tasksDir> <claimers> [prefix] with an IPC channel');
}
const boards = Array.from({ length: count }, (_, i) => new FileBoard(dir, { agent: `${prefix}c${i}` }));

process.once('message', () => {
  const ids: number[][] = boards.map(() => []);
  Promise.all(
    boards.map(async (board, i) => {
      for (;;) {
        const task = await board.claimNext(`${prefix}c${i}`);
        if (!task) return;
        ids[i]!.push(task.id);
      }
    }),
  ).then(
    () => send({ ids }, undefined, {}, () => process.disconnect?.()),
    (error: unknown) => send({ error: error instanceof Error ? error.message : String(error) }, undefined, {}, () => process.disconnect?.()),
  );
});
send({ ready: true });
