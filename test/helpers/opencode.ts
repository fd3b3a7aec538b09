// The pinned OpenCode CLI (`opencode-ai`, a devDependency) for the tests that run it as a huddle
// teammate. The npm package's bin/opencode.exe is a placeholder that its postinstall replaces with
// the native binary of the platform package (an optional dependency); where the postinstall did not
// run, the platform package's binary is used directly. A test that needs it fails under CI=true
// when it is missing, and is skipped locally with a line saying what to install.
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { REPO_ROOT } from './run-cli.js';

const INSTALL = 'npm install (the pinned devDependency opencode-ai brings the native binary of OpenCode)';

/** The path of OpenCode's native binary, or undefined when it is not installed. */
export function findOpenCode(): string | undefined {
  const require = createRequire(path.join(REPO_ROOT, 'package.json'));
  let packageDir: string;
  try {
    packageDir = path.dirname(require.resolve('opencode-ai/package.json'));
  } catch {
    return undefined;
  }
  const wrapperBin = path.join(packageDir, 'bin', 'opencode.exe');
  // The placeholder is a few hundred bytes; the native binary is a hundred megabytes and more.
  if (existsSync(wrapperBin) && statSync(wrapperBin).size > 1_000_000) return wrapperBin;
  const platform = `${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;
  for (const suffix of [platform, `${platform}-baseline`, `${platform}-musl`, `${platform}-baseline-musl`]) {
    try {
      const dir = path.dirname(createRequire(path.join(packageDir, 'package.json')).resolve(`opencode-${suffix}/package.json`));
      const bin = path.join(dir, 'bin', process.platform === 'win32' ? 'opencode.exe' : 'opencode');
      if (existsSync(bin)) return bin;
    } catch {
      // not this variant
    }
  }
  return undefined;
}

/** For describe.skipIf: throws under CI (the part must be there), true (skip) locally when missing. */
export function skipWithoutOpenCode(): boolean {
  if (findOpenCode()) return false;
  const missing = `OpenCode's native binary is not installed: ${INSTALL}`;
  if (process.env.CI === 'true') throw new Error(`OpenCode is required under CI: ${missing}`);
  console.warn(`skipping the OpenCode teammate tests: ${missing}`);
  return true;
}

/** OpenCode's environment in tests: its own HOME, offline (its model table as bundled, no plugins to fetch). */
export function openCodeEnv(home: string): Record<string, string> {
  mkdirSync(home, { recursive: true });
  return {
    HOME: home,
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    OPENCODE_DISABLE_SHARE: '1',
  };
}
