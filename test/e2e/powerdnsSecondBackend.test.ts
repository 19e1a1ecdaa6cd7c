import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { stringify } from 'yaml';
import { startGslbd } from '../../src/process/gslbdProcess.js';
import { udpQuery } from '../support/dnsClient.js';
import { startPdns, type PdnsServer } from '../support/pdnsServer.js';
import { zonesConfig } from '../support/powerdnsFixture.js';

/**
 * What a second PowerDNS backend holding fail-safe records does for the GSLB zones while the
 * engine is down (issue 26, item 4; src/doors/powerdns/README.md, "Engine outages"): the real
 * pdns_server 4.7 with the bind backend beside the remote backend, in both orders, before and
 * after the engine stops. Pinned so that a PowerDNS upgrade that starts passing a failed lookup
 * on to the next backend (which would make a fail-safe zone work) fails this test.
 */

const RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];
/** `launch` and `zone-cache-refresh-interval` of each pdns_server (0: no zone cache, the zone found by SOA lookups in backend order). */
const VARIANTS: readonly (readonly [string, number])[] = [
  ['remote,bind', 300],
  ['bind,remote', 300],
  ['remote,bind', 0],
  ['bind,remote', 0],
];

test('a bind backend with fail-safe records never answers for the GSLB zone only while the engine is down: either the engine answers (and its failure is SERVFAIL) or the bind backend answers always', async (t) => {
  t.timeout(90000);
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-pdns-second-'));
  const pdns: PdnsServer[] = [];
  writeFileSync(join(dir, 'gslbd.yaml'), stringify({ ...zonesConfig(), listeners: { powerdns: { path: 'gslbd.sock' } } }));
  const gslbd = await startGslbd(join(dir, 'gslbd.yaml'), { signals: false, watchFile: false, logDestination: openSync(join(dir, 'gslbd.log'), 'a') });
  let engineUp = true;
  t.teardown(async () => {
    for (const p of pdns) await p.stop();
    if (engineUp) await gslbd.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  // The fail-safe zone: the GSLB name with a fail-safe address the engine never answers, and a
  // name only this backend holds.
  writeFileSync(
    join(dir, 'example.test.zone'),
    [
      '$ORIGIN example.test.',
      '@ 300 IN SOA ns1.example.test. hostmaster.example.test. 2024010101 3600 600 604800 60',
      '@ 300 IN NS ns1.example.test.',
      'www 30 IN A 192.0.2.200',
      'onlybind 30 IN A 192.0.2.201',
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'named.conf'), `zone "example.test" { type master; file "${join(dir, 'example.test.zone')}"; };\n`);
  const socketPath = join(dir, 'gslbd.sock');
  for (const [launch, cache] of VARIANTS) {
    pdns.push(
      await startPdns({
        socketPath,
        instance: launch.replace(',', '-'),
        settings: { launch, 'bind-config': join(dir, 'named.conf'), 'zone-cache-refresh-interval': cache },
      }),
    );
  }
  const ask = async (p: PdnsServer, name: string): Promise<string> => {
    const r = await udpQuery({ address: p.address, port: p.port }, { name, type: 'A' }, 5000);
    return `${RCODES[r.rcode] ?? r.rcode} ${r.answers.map((a) => a.split(' ').pop()).join(',')}`.trim();
  };
  const observe = async (): Promise<Record<string, string>> => {
    const seen: Record<string, string> = {};
    for (const [i, [launch, cache]] of VARIANTS.entries()) {
      for (const name of ['www.example.test', 'onlybind.example.test']) seen[`${launch} zc=${cache} ${name}`] = await ask(pdns[i]!, name);
    }
    return seen;
  };
  const up = await observe();
  await gslbd.stop();
  engineUp = false;
  const down = await observe();
  // Whichever backend's domain id PowerDNS picked for the zone answers every name of it: the
  // remote backend with the zone cache on (in both orders: the bind backend's names are NXDOMAIN),
  // the first backend in `launch` order without it (bind first: the engine is never asked). The
  // remote backend failing ends the query; nothing passes it on to the bind backend.
  const GSLB = { www: 'NOERROR 192.0.2.10', onlybind: 'NXDOMAIN' };
  const BIND = { www: 'NOERROR 192.0.2.200', onlybind: 'NOERROR 192.0.2.201' };
  const DOWN = { www: 'SERVFAIL', onlybind: 'SERVFAIL' };
  const rows = (list: readonly (typeof GSLB)[]): Record<string, string> =>
    Object.fromEntries(
      VARIANTS.flatMap(([launch, cache], i) => [
        [`${launch} zc=${cache} www.example.test`, list[i]!.www],
        [`${launch} zc=${cache} onlybind.example.test`, list[i]!.onlybind],
      ]),
    );
  t.deepEqual(up, rows([GSLB, GSLB, GSLB, BIND]), 'engine up');
  t.deepEqual(down, rows([DOWN, DOWN, DOWN, BIND]), 'engine down');
});
