import { build } from 'esbuild';
import { bundleOptions } from './bundle-options.mjs';
const r = await build({ ...bundleOptions({ outdir: '/tmp/chunks-out', version: '0' }), write: false, metafile: true, sourcemap: false, logLevel: 'silent' });
const outs = r.metafile.outputs;
const entryOf = (f) => Object.keys(outs).find((k) => outs[k].entryPoint === f);
function closure(start, acc = new Set()) {
  const q = [start];
  acc.add(start);
  while (q.length) {
    const o = q.pop();
    for (const i of outs[o].imports)
      if (i.kind === 'import-statement' && !i.external && !acc.has(i.path)) {
        acc.add(i.path);
        q.push(i.path);
      }
  }
  return acc;
}
const face = process.argv[2];
const set = closure(entryOf(face), closure(entryOf('src/cli.ts')));
const files = [];
for (const o of set) for (const [inp, v] of Object.entries(outs[o].inputs)) files.push([inp, v.bytesInOutput]);
const filter = process.argv[3] ?? '^src/';
for (const [f, b] of files
  .filter(([f]) => new RegExp(filter).test(f))
  .sort((a, b) => b[1] - a[1])
  .slice(0, Number(process.argv[4] ?? 400)))
  console.log(b, f);
