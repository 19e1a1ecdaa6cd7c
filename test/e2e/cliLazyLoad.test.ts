import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { CLI, REPO_ROOT } from '../support/engineProcess.js';

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
