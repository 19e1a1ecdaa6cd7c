import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { stringify } from 'yaml';
import { freePort } from '../support/freePort.js';
import { startPdns } from '../support/pdnsServer.js';
import { zonesConfig } from '../support/powerdnsFixture.js';

/**
 * A real pdns_server in front of the real engine process (`node dist/src/cli/main.js serve`):
 * PowerDNS refuses to start without the engine's socket; an engine killed while PowerDNS runs
 * costs SERVFAILs, never an NXDOMAIN for a GSLB name, and answers come back once the engine is up
 * again; a health override through the admin API shows in the next answer; the example
 * configuration refuses AXFR.
 */

const CLI = fileURLToPath(
  new URL(existsSync(fileURLToPath(new URL('../../dist', import.meta.url))) ? '../../dist/src/cli/main.js' : '../../src/cli/main.js', import.meta.url),
);

interface Engine {
  child: ChildProcess;
  exited: Promise<void>;
}

const engines = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of engines) child.kill('SIGKILL');
});

/**
 * Starts the engine process and resolves when it logs `gslbd up` (its PowerDNS socket is open
 * then). A process that is not up within 30 s is killed.
 */
function startEngine(configFile: string): Promise<Engine> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (npm test runs tsc before ava)`);
  const child = spawn(process.execPath, [CLI, 'serve', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  engines.add(child);
  const exited = new Promise<void>((r) =>
    child.once('exit', () => {
      engines.delete(child);
      r();
    }),
  );
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`engine not up within 30 s:\n${out}`));
    }, 30000);
    const onData = (chunk: Buffer): void => {
      out += chunk.toString();
      if (out.includes('"msg":"gslbd up"')) {
        clearTimeout(timer);
        resolve({ child, exited });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`engine exited with ${code}:\n${out}`));
    });
  });
}

/** dig's status for a query (SERVFAIL included), or "TIMEOUT". */
function status(port: number, ...args: string[]): Promise<{ status: string; answer: string[] }> {
  return new Promise((resolve) => {
    execFile('dig', ['@127.0.0.1', '-p', String(port), '+norec', '+time=3', '+tries=1', ...args], { timeout: 15000 }, (_err, stdout) => {
      const s = /status: (\w+)/.exec(stdout)?.[1] ?? 'TIMEOUT';
      const answer: string[] = [];
      const start = stdout.indexOf(';; ANSWER SECTION:\n');
      if (start >= 0) {
        for (const line of stdout.slice(start).split('\n').slice(1)) {
          if (line.trim() === '') break;
          answer.push(line.replace(/\s+/g, ' ').trim());
        }
      }
      resolve({ status: s, answer });
    });
  });
}

const ADMIN_TOKEN = 'powerdns-e2e-admin-token';

function setup(adminPort?: number): { dir: string; socket: string; configFile: string } {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-pdns-restart-'));
  const socket = join(dir, 'gslbd.sock');
  const configFile = join(dir, 'gslbd.yaml');
  const admin = adminPort ? { admin: { address: '127.0.0.1', port: adminPort, token: ADMIN_TOKEN } } : {};
  // No location data: every client is unknown and gets the default data center (us-east).
  writeFileSync(configFile, stringify({ ...zonesConfig(), listeners: { powerdns: { path: socket }, ...admin } }));
  return { dir, socket, configFile };
}

test('PowerDNS exits at start when the engine socket is missing: start the engine first', async (t) => {
  const { dir, socket } = setup();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const pdns = await startPdns({ socketPath: socket, expectExit: true });
  t.is(pdns.exitCode(), 1);
  t.regex(pdns.output(), /Could not send a message to remote process|Cannot connect|No such file/);
  await pdns.stop();
});

test('engine killed and restarted while PowerDNS runs: SERVFAIL meanwhile, never NXDOMAIN, answers come back', async (t) => {
  const { dir, socket, configFile } = setup();
  let engine = await startEngine(configFile);
  const pdns = await startPdns({ socketPath: socket, instance: 'restart' });
  t.teardown(async () => {
    engine.child.kill('SIGKILL');
    await pdns.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const www = (): Promise<{ status: string; answer: string[] }> => status(pdns.port, 'www.example.test', 'A');
  t.deepEqual(await www(), { status: 'NOERROR', answer: ['www.example.test. 30 IN A 192.0.2.10'] });
  t.is((await status(pdns.port, 'static.example.test', 'A')).status, 'NOERROR');
  t.is((await status(pdns.port, 'www.example.test', 'ANY', '+tcp')).status, 'NOERROR');

  engine.child.kill('SIGKILL');
  await engine.exited;
  const whileDown: string[] = [];
  for (let i = 0; i < 6; i++) whileDown.push((await www()).status);
  whileDown.push((await status(pdns.port, 'www.example.test', 'ANY', '+tcp')).status);
  t.deepEqual(whileDown, Array(7).fill('SERVFAIL'));

  engine = await startEngine(configFile);
  // Each PowerDNS connection that held the old socket fails its first query (docs/notes/powerdns-remote-backend.md §6): at most
  // receiver-threads × distributor-threads + 1 (TCP) SERVFAILs, then answers.
  const after: string[] = [];
  for (let i = 0; i < 12; i++) {
    const r = await www();
    after.push(r.status);
    if (r.status === 'NOERROR') t.deepEqual(r.answer, ['www.example.test. 30 IN A 192.0.2.10']);
  }
  t.false(after.includes('NXDOMAIN'), after.join(' '));
  t.true(
    after.every((s) => s === 'NOERROR' || s === 'SERVFAIL'),
    after.join(' '),
  );
  t.deepEqual(after.slice(-4), ['NOERROR', 'NOERROR', 'NOERROR', 'NOERROR'], after.join(' '));
  t.is(pdns.exitCode(), undefined, 'PowerDNS kept running');
});

test('the example configuration refuses AXFR in PowerDNS itself', async (t) => {
  const { dir, socket, configFile } = setup();
  const engine = await startEngine(configFile);
  const pdns = await startPdns({ socketPath: socket });
  t.teardown(async () => {
    engine.child.kill('SIGKILL');
    await pdns.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const out = await new Promise<string>((resolve) =>
    execFile('dig', ['@127.0.0.1', '-p', String(pdns.port), '+time=3', '+tries=1', 'example.test', 'AXFR'], { timeout: 15000 }, (_e, stdout) =>
      resolve(stdout),
    ),
  );
  t.regex(out, /Transfer failed/);
  t.notRegex(out, /\sIN\s+A\s/);
});

test('a health override through the admin API shows in the next answer through PowerDNS', async (t) => {
  const adminPort = await freePort();
  const { dir, socket, configFile } = setup(adminPort);
  const engine = await startEngine(configFile);
  const pdns = await startPdns({ socketPath: socket });
  t.teardown(async () => {
    engine.child.kill('SIGKILL');
    await pdns.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const override = async (override: string): Promise<number> =>
    (
      await fetch(`http://127.0.0.1:${adminPort}/health/override`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        body: JSON.stringify({ endpoint: 'web/us-east/192.0.2.10', override }),
      })
    ).status;
  const www = async (): Promise<string[]> => (await status(pdns.port, 'www.example.test', 'A', '+subnet=1.1.1.0/24')).answer;
  t.deepEqual(await www(), ['www.example.test. 30 IN A 192.0.2.10']);
  t.is(await override('force-down'), 200);
  // The default data center is out: the live ones tie (no location), and rotation picks one.
  const down = await www();
  t.is(down.length, 1);
  t.regex(down[0]!, /^www\.example\.test\. 30 IN A (198\.51\.100\.10|203\.0\.113\.10)$/);
  t.is(await override('none'), 200);
  t.deepEqual(await www(), ['www.example.test. 30 IN A 192.0.2.10']);
});
