import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { BUNDLED_CLI, CLI, REPO_ROOT } from '../support/engineProcess.js';

/**
 * `gslbd ctl` loads only what it needs (issue 23): the modules a command line loads, recorded by
 * a module-loader hook in the real `gslbd` process, not a timing. `ctl` and its help need the
 * command-line modules and the version; the engine (process, pipeline, capabilities, doors,
 * admin, agent, configuration) is loaded by the commands that run it.
 */

const dir = mkdtempSync(join(tmpdir(), 'gslbd-lazy-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

/** The hook runs in the loader thread: it appends every module URL it loads to a file. */
writeFileSync(
  join(dir, 'hooks.mjs'),
  `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(process.env.GSLBD_TEST_LOADED, url + '\\n');
  return next(url, context);
}
`,
);
writeFileSync(join(dir, 'register.mjs'), `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});\n`);

let runs = 0;
/** The gslbd modules (paths under dist/src) `gslbd ARGS` loads, and its exit code. */
function loadedBy(args: readonly string[]): Promise<{ code: number; modules: string[] }> {
  const record = join(dir, `loaded-${runs++}.txt`);
  writeFileSync(record, '');
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', pathToFileURL(join(dir, 'register.mjs')).href, CLI, ...args],
      { cwd: REPO_ROOT, env: { ...process.env, GSLBD_TEST_LOADED: record }, timeout: 60000 },
      (err) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        const modules = readFileSync(record, 'utf8')
          .split('\n')
          .filter((u) => u.startsWith('file:'))
          .map((u) => relative(join(REPO_ROOT, 'dist'), fileURLToPath(u)))
          .filter((p) => p.startsWith('src/'));
        resolve({ code, modules });
      },
    );
  });
}

/**
 * What `ctl` may load: the command line itself (with the what-if arguments and the replay summary
 * of `ctl what-if`), the replay batch size and the version (read from package.json).
 */
const CTL_MODULES = /^src\/(cli\/(main|ctlCommands|whatIfArguments|whatIfReplay)\.js|admin\/whatIfLimits\.js|core\/telemetry\/buildInfo\.js)$/;

for (const args of [['ctl', '--help'], ['ctl', 'status', '--help'], ['ctl', '--admin', 'http://127.0.0.1:1', 'status'], ['--help'], ['--version']]) {
  test(`gslbd ${args.join(' ')} loads no engine module`, async (t) => {
    const { modules } = await loadedBy(args);
    t.true(modules.includes('src/cli/main.js'), 'the hook records the modules gslbd loads');
    t.deepEqual(
      modules.filter((m) => !CTL_MODULES.test(m)),
      [],
    );
  });
}

test('the commands that need the engine still load it: check-config, schema', async (t) => {
  const schema = await loadedBy(['schema']);
  t.is(schema.code, 0);
  t.true(schema.modules.includes('src/process/configSchema.js'));
  const check = await loadedBy(['check-config', 'examples/quickstart.yaml']);
  t.is(check.code, 0);
  t.true(check.modules.some((m) => m.startsWith('src/capabilities/')));
});

/** The bundle's files (`dist/...` paths) and CommonJS packages (`node_modules/NAME`) `node BUNDLED_CLI ARGS` loads. */
function bundleLoads(args: readonly string[]): Promise<{ code: number; files: string[]; packages: string[] }> {
  const record = join(dir, `loaded-${runs++}.txt`);
  writeFileSync(record, '');
  // The ESM hook sees the bundle's chunks; packages loaded through createRequire appear in require.cache only.
  const exitRecord = join(dir, `exit-${runs}.mjs`);
  writeFileSync(
    exitRecord,
    `import { createRequire } from 'node:module'; import { appendFileSync } from 'node:fs';
const require = createRequire(import.meta.url);
process.on('exit', () => appendFileSync(${JSON.stringify(record)}, Object.keys(require.cache).map((p) => 'cjs:' + p + '\\n').join('')));
`,
  );
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', pathToFileURL(join(dir, 'register.mjs')).href, '--import', pathToFileURL(exitRecord).href, BUNDLED_CLI, ...args],
      { cwd: REPO_ROOT, env: { ...process.env, GSLBD_TEST_LOADED: record }, timeout: 60000 },
      (err) => {
        const lines = readFileSync(record, 'utf8').split('\n');
        resolve({
          code: err ? (typeof err.code === 'number' ? err.code : -1) : 0,
          files: lines.filter((u) => u.startsWith('file:')).map((u) => relative(REPO_ROOT, fileURLToPath(u))),
          packages: [...new Set(lines.filter((l) => l.startsWith('cjs:')).map((l) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(l)?.[1] ?? ''))].filter(Boolean),
        });
      },
    );
  });
}

test('the bundle keeps the lazy loads: ctl reads a small part of it, check-config loads neither ioredis nor yaml', async (t) => {
  const bundleDir = join(REPO_ROOT, 'dist/bundle/cli');
  const size = (files: readonly string[]): number => files.reduce((sum, f) => sum + statSync(join(REPO_ROOT, f)).size, 0);
  const total = size(readdirSync(bundleDir).map((f) => relative(REPO_ROOT, join(bundleDir, f))));
  const ctl = await bundleLoads(['ctl', '--help']);
  t.is(ctl.code, 0);
  t.true(ctl.files.includes('dist/bundle/cli/gslbd.js'), 'the hook records the bundle');
  t.true(size(ctl.files) < total / 10, `ctl --help loads ${size(ctl.files)} of ${total} bytes`);
  const check = await bundleLoads(['check-config', 'examples/quickstart.yaml']);
  t.is(check.code, 0);
  t.true(size(check.files) > size(ctl.files) * 5, 'check-config loads the engine');
  // yaml is only for problem positions of a configuration that fails to parse.
  t.deepEqual(
    check.packages.filter((p) => p === 'ioredis' || p === 'yaml'),
    [],
  );
  t.true(check.packages.includes('mmdb-lib'), `the hook records packages loaded through createRequire (mmdb-lib's decoder): ${check.packages.join(' ')}`);
});
