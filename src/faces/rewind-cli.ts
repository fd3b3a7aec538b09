// `huddle rewind`: the workspace's checkpoints (runtime/workspace/checkpoints.ts), newest first, with
// when, which agent, before which tool call, and how many files that call (and any after it, up to
// the next checkpoint) changed; `huddle rewind <id>` puts the workspace back as it was then, after
// a checkpoint of the state now (so that `huddle rewind <that id>` undoes the rewind);
// `--files path…` puts back only those files.
import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { Checkpoints, checkpointDirFor } from '../runtime/workspace/checkpoints.js';
import { CheckpointError } from '../runtime/workspace/checkpoint-git.js';
import { describeCheckpoints, rewind, rewoundLine } from '../runtime/workspace/rewind.js';

export interface RewindRequest {
  cwd?: string | undefined;
  id?: string | undefined;
  files?: string[];
  all?: boolean;
}

export async function runRewind(request: RewindRequest): Promise<number> {
  const root = realpathSync(path.resolve(request.cwd ?? '.'));
  if (!existsSync(path.join(checkpointDirFor(root), 'shadow.git'))) {
    process.stderr.write(`huddle: no checkpoints of ${root} yet (huddle takes one before each command or file write of an agent)\n`);
    return request.id ? 2 : 0;
  }
  const store = Checkpoints.for(root);
  try {
    if (!request.id) {
      const list = await store.list(request.all ? 1000 : 30);
      if (!list.length) {
        process.stdout.write(`no checkpoints of ${root} yet\n`);
        return 0;
      }
      process.stdout.write(`checkpoints of ${root}, newest first (huddle rewind ID puts the workspace back as it was then):\n`);
      for (const line of describeCheckpoints(list)) process.stdout.write(`  ${line}\n`);
      return 0;
    }
    const outcome = await rewind(store, request.id, { files: request.files ?? [] });
    process.stdout.write(`${rewoundLine(request.id, outcome)}\n`);
    process.stdout.write(`to undo this rewind: huddle rewind ${outcome.before.slice(0, 12)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof CheckpointError) {
      process.stderr.write(`huddle: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}
