// The person trusts the workspace's settings files as they are now (what `huddle trust` and --trust
// do, docs/trust.md), for tests that put agents, hooks or servers in them and open a team in-process.
import { loadSettings } from '../../src/runtime/settings/load.js';

export function trustWorkspace(root: string): void {
  loadSettings({ cwd: root, trust: true });
}
