import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeKeys } from '../support/dnssecKeys.js';
import { signedDeploymentConfig } from '../support/dnssecDeployment.js';
import { startEngine, stopAllEngines } from '../support/engineProcess.js';
import { fixtureLocationFiles } from '../support/fixtureDeployment.js';
import { startUnbound, type Unbound } from '../support/unbound.js';
import { sleep } from '../support/waitFor.js';

/**
 * A pre-published ZSK rollover (RFC 6781 §4.1.1.1) in real time, through unbound: the keys'
 * BIND timing metadata (dnssec-keygen -P/-A/-I/-D) moves the engine from the old ZSK to the new
 * one without a reload, with a DNSKEY TTL of 1 s so that unbound's cached DNSKEY RRset expires
 * within the test: the new ZSK is published 2 s before it signs (twice the DNSKEY TTL), the old
 * one stops signing then and leaves the RRset 3 s later. Queries through unbound every 250 ms,
 * each for a name unbound has not cached (a new wildcard expansion, a new ECS /8 for `www`), must
 * all validate (AD), across the change of signer. The same rollover under an injected clock,
 * checked against every DNSKEY RRset a cache could hold, is in
 * src/capabilities/dnssec/answerSigner.test.ts.
 */

let keyDir: string | undefined;
let unbound: Unbound | undefined;

test.after.always(async () => {
  await unbound?.stop();
  await stopAllEngines();
  if (keyDir) rmSync(keyDir, { recursive: true, force: true });
});

test('a pre-published ZSK rollover keeps every answer validating through unbound', async (t) => {
  keyDir = mkdtempSync(join(tmpdir(), 'gslbd-dnssec-roll-'));
  const now = Math.floor(Date.now() / 1000);
  // Rollover moments: far enough ahead for the engine and unbound to start on a busy machine.
  const publish = now + 15;
  const roll = publish + 2;
  const gone = roll + 3;
  const [ksk, oldZsk, newZsk] = [
    ...makeKeys(keyDir, 'example.test', [{ ksk: true }, { timing: { publish: now - 3600, activate: now - 3600, inactive: roll, delete: gone } }]),
    ...makeKeys(keyDir, 'example.test', [{ timing: { publish, activate: roll } }]),
  ];
  const [ed] = makeKeys(keyDir, 'ed.test', [{ ksk: true, algorithm: 15, tool: 'gslbd' }]);
  const engine = await startEngine(
    signedDeploymentConfig({ exampleKeys: [ksk!, oldZsk!, newZsk!].map((k) => join(keyDir!, k.base)), edKeys: [join(keyDir, ed!.base)], dnskeyTtl: 1 }),
    { files: fixtureLocationFiles() },
  );
  unbound = await startUnbound({ stubs: [{ zone: 'example.test', ...engine.server }], trustAnchors: [ksk!.ds] });
  const ready = Date.now() / 1000;
  if (ready > publish)
    t.log(`engine and unbound ready only ${(ready - publish).toFixed(1)} s after the successor's publication: the test sees less of the rollover`);

  const signers = new Set<number>();
  const failures: string[] = [];
  let i = 0;
  while (Date.now() / 1000 < gone + 1.5) {
    i++;
    for (const [name, extra] of [
      [`r${i}.wild.example.test`, []],
      ['www.example.test', [`+subnet=${11 + (i % 200)}.0.0.0/24`]],
    ] as const) {
      const r = await unbound.query(name, 'A', extra);
      const at = (Date.now() / 1000 - roll).toFixed(2);
      if (r.status !== 'NOERROR' || !r.flags.includes('ad')) failures.push(`${name} at roll${at} s: ${r.status} ${r.flags.join(' ')}`);
      for (const a of r.answer) if (a.type === 'RRSIG') signers.add(Number(a.data.split(' ')[6]));
    }
    await sleep(250);
  }
  t.deepEqual(failures, [], unbound.log());
  t.true(signers.has(oldZsk!.keyTag) && signers.has(newZsk!.keyTag), `signed by both ZSKs over the test: ${[...signers].join(', ')}`);
  const keys = await unbound.query('example.test', 'DNSKEY');
  t.true(keys.flags.includes('ad'));
  t.deepEqual(
    keys.answer
      .filter((a) => a.type === 'DNSKEY')
      .map((a) => Number(a.data.split(' ')[0]))
      .sort((a, b) => a - b),
    [256, 257],
    'after Delete the old ZSK has left the DNSKEY RRset',
  );
});
