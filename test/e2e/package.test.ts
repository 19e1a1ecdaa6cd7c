import test from 'ava';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { CLI, REPO_ROOT } from '../support/engineProcess.js';

/**
 * What `npm install -g` gets: the package's `files` ship the compiled engine, the native sources
 * (the install builds them), the examples and the documentation, never a test; and the `gslbd`
 * command starts Node with the V8 flag the README asks for (its shebang).
 */

function run(cmd: string, args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(cmd, args, { cwd: REPO_ROOT, timeout: 60000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
    ),
  );
}

test('the package ships the engine, native sources, examples and docs, and no test', async (t) => {
  const r = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts']);
  t.is(r.code, 0, r.stderr);
  const files = (JSON.parse(r.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
  for (const wanted of [
    'dist/src/cli/main.js',
    'dist/bundle/cli/gslbd.js',
    'dist/package.json',
    'binding.gyp',
    'native/notify.cc',
    'native/addon.cc',
    'examples/quickstart.yaml',
    'README.md',
  ]) {
    t.true(files.includes(wanted), wanted);
  }
  t.deepEqual(
    files.filter((f) => /\.test\.(ts|js|js\.map)$|^test\/|^dist\/test\/|^src\//.test(f)),
    [],
  );
});

test('the gslbd command runs Node with --min-semi-space-size=16 (its shebang)', async (t) => {
  const shebang = readFileSync(CLI, 'utf8').split('\n')[0]!;
  t.is(shebang, '#!/usr/bin/env -S node --min-semi-space-size=16');
  // What the kernel runs for that line (the interpreter and the rest as one argument), with a probe instead of the script.
  const space = shebang.indexOf(' ');
  const r = await run(shebang.slice(2, space), [shebang.slice(space + 1), '-p', 'process.execArgv[0]']);
  t.is(r.stdout.trim(), '--min-semi-space-size=16', r.stderr);
});
