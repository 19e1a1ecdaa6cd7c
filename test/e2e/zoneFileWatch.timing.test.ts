import test from 'ava';
import { appendFileSync, mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { udpQuery } from '../support/dnsClient.js';
import { startEngine, stopAllEngines, type EngineProcess, type LogLine } from '../support/engineProcess.js';

/**
 * Issue 23: the file watch covers the zones' zone files. An edit of a zone file alone reloads, as
 * an edit of the configuration file does and under the same rules: a replaced file (rename, the
 * Kubernetes-style symlink swap) at once; an in-place write only once it held still over two polls
 * 500 ms apart (a half-written file is never applied); a bad file keeps the running configuration.
 * A zone file a reload adds is watched from then on. One engine process (watch on, no SIGHUP, no
 * admin API), steps in order, answers read over UDP from its listener.
 */

const zone = (www: string, extra = ''): string => `$TTL 300
@ IN SOA ns1 hostmaster ( 1 3600 600 604800 60 )
  IN NS ns1
ns1 A 192.0.2.53
${extra}www A ${www}
`;

const config = (extraZone = ''): string => `listeners:
  dns: [{ address: 127.0.0.1, port: 0 }]
zones:
  - name: example.test
    zoneFile: example.test.zone
${extraZone}`;

let engine: EngineProcess;
/** The zone file's path; a symbolic link into `v1/` at first (as a Kubernetes ConfigMap mounts it). */
let zoneFile: string;
test.before(async () => {
  engine = await startEngine(config(), { files: { 'example.test.zone': zone('192.0.2.0') } });
  // Then the ConfigMap layout: example.test.zone → ..data/example.test.zone, ..data → v1 (a replace: reloads).
  mkdirSync(join(engine.dir, 'v1'));
  writeFileSync(join(engine.dir, 'v1', 'example.test.zone'), zone('192.0.2.1'));
  symlinkSync('v1', join(engine.dir, '..data'));
  zoneFile = join(engine.dir, 'example.test.zone');
  const from = engine.logs().length;
  symlinkSync('..data/example.test.zone', `${zoneFile}.link`);
  renameSync(`${zoneFile}.link`, zoneFile);
  await engine.waitForLog(reloaded(zoneReason()), 15000, from);
});
test.after.always(stopAllEngines);

const reloaded = (reason: string) => (l: LogLine) => l.msg === 'configuration reloaded' && l.reason === reason;
const zoneReason = (name = 'example.test.zone') => `zone file changed: ${join(engine.dir, name)}`;

async function www(name = 'www.example.test'): Promise<string> {
  const r = await udpQuery(engine.server, { name, type: 'A' });
  return r.rcode !== 0 ? `rcode ${r.rcode}` : (r.answers[0]?.split(' ')[2] ?? 'NODATA');
}

/** Queries every 20 ms until stopped; the distinct answers seen, in order of first sight. */
function answersWhile(t: { teardown(fn: () => Promise<unknown>): void }): { stop(): Promise<string[]> } {
  let running = true;
  const seen: string[] = [];
  const loop = (async () => {
    while (running) {
      const a = await www();
      if (!seen.includes(a)) seen.push(a);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const stop = async () => {
    running = false;
    await loop;
    return seen;
  };
  t.teardown(stop);
  return { stop };
}

test.serial('a symlink swap of the zone file reloads at once', async (t) => {
  t.is(await www(), '192.0.2.1');
  mkdirSync(join(engine.dir, 'v2'));
  writeFileSync(join(engine.dir, 'v2', 'example.test.zone'), zone('192.0.2.2'));
  const from = engine.logs().length;
  const began = Date.now();
  symlinkSync('v2', join(engine.dir, '..data.new'));
  renameSync(join(engine.dir, '..data.new'), join(engine.dir, '..data'));
  await engine.waitForLog(reloaded(zoneReason()), 10000, from);
  t.is(await www(), '192.0.2.2');
  t.true(Date.now() - began < 8000, `applied ${Date.now() - began} ms after the swap`);
});

test.serial('a rename over the zone file reloads at once', async (t) => {
  // From here on a plain file (the rename replaces the link).
  writeFileSync(`${zoneFile}.tmp`, zone('192.0.2.3'));
  const from = engine.logs().length;
  renameSync(`${zoneFile}.tmp`, zoneFile);
  await engine.waitForLog(reloaded(zoneReason()), 10000, from);
  t.is(await www(), '192.0.2.3');
});

test.serial('an in-place write is applied only once it held still over two polls: never half-written', async (t) => {
  const loop = answersWhile(t);
  const from = engine.logs().length;
  // A writer that pauses between parts: each prefix is a valid zone file without www (NXDOMAIN).
  writeFileSync(zoneFile, zone('192.0.2.4').split('www A')[0]!);
  for (const part of ['a1 A 192.0.2.101\n', 'a2 A 192.0.2.102\n', 'www A 192.0.2.4\n']) {
    await new Promise((r) => setTimeout(r, 300));
    appendFileSync(zoneFile, part);
  }
  await engine.waitForLog(reloaded(zoneReason()), 10000, from);
  await new Promise((r) => setTimeout(r, 200));
  const seen = await loop.stop();
  t.deepEqual(seen, ['192.0.2.3', '192.0.2.4'], 'only the old and the finished file, never a prefix');
  t.is(engine.logs().slice(from).filter(reloaded(zoneReason())).length, 1, 'one reload for the whole write');
  t.is(await www('a2.example.test'), '192.0.2.102');
});

test.serial('a bad zone file keeps the running configuration, naming file:line; fixing it reloads', async (t) => {
  let from = engine.logs().length;
  writeFileSync(`${zoneFile}.tmp`, zone('192.0.2.300'));
  renameSync(`${zoneFile}.tmp`, zoneFile);
  const failed = await engine.waitForLog((l) => l.msg === 'reload failed; keeping the running configuration' && l.reason === zoneReason(), 10000, from);
  t.like(failed.problems, [{ path: 'zones[0].zoneFile', message: 'example.test.zone:5: A: "192.0.2.300" is not an IPv4 address' }]);
  t.is(await www(), '192.0.2.4');
  from = engine.logs().length;
  writeFileSync(`${zoneFile}.tmp`, zone('192.0.2.5'));
  renameSync(`${zoneFile}.tmp`, zoneFile);
  await engine.waitForLog(reloaded(zoneReason()), 10000, from);
  t.is(await www(), '192.0.2.5');
});

test.serial('a zone file a reload adds is watched from then on', async (t) => {
  writeFileSync(join(engine.dir, 'other.test.zone'), zone('198.51.100.1'));
  let from = engine.logs().length;
  engine.writeConfig(config('  - name: other.test\n    zoneFile: other.test.zone\n'));
  await engine.waitForLog(reloaded('file changed'), 10000, from);
  t.is(await www('www.other.test'), '198.51.100.1');
  from = engine.logs().length;
  writeFileSync(join(engine.dir, 'other.test.zone.tmp'), zone('198.51.100.2'));
  renameSync(join(engine.dir, 'other.test.zone.tmp'), join(engine.dir, 'other.test.zone'));
  await engine.waitForLog(reloaded(zoneReason('other.test.zone')), 10000, from);
  t.is(await www('www.other.test'), '198.51.100.2');
});
