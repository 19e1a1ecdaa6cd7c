// Bundles the gslbd command (src/cli/main.ts and everything it imports, packages included) into
// dist/bundle/cli/gslbd.js, the `gslbd` of the package (bundle/README.md). Run by `npm run build`
// after `tsc`. One file instead of hundreds of modules: Node resolves, reads and compiles a few
// files at start instead of ~500, which is most of a restart's module-loading time (issue 26,
// sub-second start; docs/BENCHMARKS.md "startup").
//
// What the modules find beside themselves through import.meta.url keeps working because the
// bundle sits as deep under dist/ as dist/src/<folder>/ does (`../../console-app/` is the
// console's script either way, the package root holding build/Release/ is found by walking up),
// and the two workers' scripts are entries of their own in the same folder
// (`./configWorkerEntry.js`, which imports the configuration worker's chunk, and
// `./imageWorker.js`). Dynamic import() stays lazy (code splitting: each command's module is a
// chunk loaded when the command line names it); packages loaded through createRequire at run time
// (ioredis, yaml, mmdb-lib's decoder, the gRPC check's packages) are not bundled and are still
// loaded only when used.
import { build } from 'esbuild';
import { chmodSync, rmSync } from 'node:fs';

const outdir = new URL('../dist/bundle/cli/', import.meta.url).pathname;
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: {
    gslbd: new URL('../src/cli/main.ts', import.meta.url).pathname,
    configWorkerEntry: new URL('../src/process/configWorkerEntry.ts', import.meta.url).pathname,
    imageWorker: new URL('../src/capabilities/geo/imageWorker.ts', import.meta.url).pathname,
  },
  outdir,
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Bundled CommonJS packages call require() for Node's built-in modules: give every chunk one.
  banner: { js: "import { createRequire as __gslbdCreateRequire } from 'node:module'; const require = __gslbdCreateRequire(import.meta.url);" },
  legalComments: 'eof',
  logLevel: 'warning',
});
chmodSync(new URL('gslbd.js', `file://${outdir}`), 0o755);
