// The bundle reads Node's builtins through process.getBuiltinModule instead of an ES module facade
// (scripts/builtins-without-facade.mjs): each import form becomes the same bindings, type-only
// imports stay for TypeScript, and no module of huddle's own (but the entry) imports a builtin statically
// once built (a dynamic import() of one builds its facade when it runs, not at start).
import { build } from 'esbuild';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundleOptions } from '../../scripts/bundle-options.mjs';
import { builtinImportsAsLookups } from '../../scripts/builtins-without-facade.mjs';

describe('builtinImportsAsLookups', () => {
  it('turns each value import of a builtin into a read of process.getBuiltinModule, keeping its lines', () => {
    const source = [
      "import path from 'node:path';",
      "import * as fs from 'node:fs';",
      "import { parseArgs } from 'node:util';",
      "import { readFile as read, type Stats, writeFile } from 'node:fs/promises';",
      "import os, { EOL } from 'node:os';",
      "import {\n  spawn,\n  type ChildProcess,\n} from 'node:child_process';",
      "import { type Socket } from 'node:net';",
      "import process from 'node:process';",
      "import type { Server } from 'node:http';",
      "import { z } from 'zod';",
      'const text = "import fs from \'node:fs\';";',
      "import {\n  join, // why this one\n  /* and this */ sep,\n} from 'node:path';",
      "import { default as events } from 'node:events';",
    ].join('\n');
    expect(builtinImportsAsLookups(source).split('\n')).toEqual([
      "const path = globalThis.process.getBuiltinModule('node:path');",
      "const fs = globalThis.process.getBuiltinModule('node:fs');",
      "const { parseArgs } = globalThis.process.getBuiltinModule('node:util');",
      "const { readFile: read, writeFile } = globalThis.process.getBuiltinModule('node:fs/promises');",
      "const os = globalThis.process.getBuiltinModule('node:os'); const { EOL } = os;",
      "const { spawn } = globalThis.process.getBuiltinModule('node:child_process');",
      '',
      '',
      '',
      '',
      "const process = globalThis.process.getBuiltinModule('node:process');",
      "import type { Server } from 'node:http';",
      "import { z } from 'zod';",
      'const text = "import fs from \'node:fs\';";',
      "const { join, sep } = globalThis.process.getBuiltinModule('node:path');",
      '',
      '',
      '',
      "import { default as events } from 'node:events';",
    ]);
  });

  it('gives the same objects the import would', async () => {
    const util = await import('node:util');
    const fs = await import('node:fs');
    expect(process.getBuiltinModule('node:util').parseArgs).toBe(util.parseArgs);
    expect(process.getBuiltinModule('node:fs')).toBe(fs.default);
  });

  it("leaves no import of a builtin in huddle's own modules once bundled, but the entry's", async () => {
    const result = await build({
      ...bundleOptions({ outdir: path.join(process.cwd(), '.builtins-check'), version: '0.0.0-test' }),
      write: false,
      metafile: true,
      sourcemap: false,
      logLevel: 'silent',
    });
    const importing = Object.entries(result.metafile.inputs)
      .filter(([input]) => input.startsWith('src/'))
      .flatMap(([input, { imports }]) =>
        imports.filter((imported) => imported.kind === 'import-statement' && imported.path.startsWith('node:')).map((imported) => `${input} ${imported.path}`),
      );
    expect(importing).toEqual(['src/cli.ts node:module']);
  }, 60_000);
});
