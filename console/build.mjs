// Builds the operator console (src/admin/README.md, "Operator console"): console/src/main.tsx and
// what it imports (preact, the world map data) into one script, dist/console-app/app.js, that the
// admin listener serves as /console/app.js. Run by `npm run build` after the type check
// (`tsc -p console/tsconfig.json`); esbuild only strips the types.
import { build } from 'esbuild';

await build({
  entryPoints: [new URL('src/main.tsx', import.meta.url).pathname],
  outfile: new URL('../dist/console-app/app.js', import.meta.url).pathname,
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  minify: true,
  legalComments: 'eof',
  logLevel: 'warning',
});
