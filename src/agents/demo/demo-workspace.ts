// A throwaway workspace for `huddle demo`: the scripted team writes real files, so they go in a
// fresh temp directory rather than wherever the person happened to run the command.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export interface DemoWorkspace {
  dir: string;
  cleanup(): Promise<void>;
}

export async function createDemoWorkspace(): Promise<DemoWorkspace> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'huddle-demo-'));
  await writeFile(
    path.join(dir, 'README.md'),
    'This is a huddle demo workspace: a scripted team works here. huddle leaves it when the demo ends, so you can look at what the team wrote; delete it when you are done.\n',
  );
  return {
    dir,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
