import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { parseRecordData } from '../../src/core/dns/presentation.js';
import type { RecordType } from '../../src/core/dns/records.js';
import { startGslbd, type RunningGslbd } from '../../src/process/gslbdProcess.js';
import { dig } from '../support/dig.js';
import { freePort } from '../support/freePort.js';
import { startPdns, type PdnsServer } from '../support/pdnsServer.js';

/**
 * Static DS, TLSA, SSHFP, NAPTR, SVCB and HTTPS records served by the standalone listener (our
 * wire encoders) and through a real pdns_server (our presentation text, parsed by PowerDNS), read
 * by the real dig: each answer's text, as BIND's library writes it, parses to the configured data.
 */

const SHA256 = '2BB183AF5F22588179A53B0A98631FAD1A292118A5F84E1F3A62E9A04A5B2C4C';
const RECORDS: [name: string, type: RecordType, data: string][] = [
  ['child', 'NS', 'ns1.child.example.test'],
  ['child', 'DS', `60485 13 2 ${SHA256}`],
  ['_443._tcp.www', 'TLSA', `3 1 1 ${SHA256}`],
  ['host', 'SSHFP', `4 2 ${SHA256}`],
  ['sip', 'NAPTR', '100 10 "S" "SIP+D2U" "" _sip._udp.example.test.'],
  ['_8443._svc', 'SVCB', '16 svc.example.test. mandatory=alpn,ipv4hint alpn=h2,h3-19 ipv4hint=192.0.2.1'],
  ['www', 'HTTPS', '1 . alpn=h3,h2 port=8443 ipv4hint=192.0.2.1 ech=AEX+DQBBpQAgACBm ipv6hint=2001:db8::1'],
];

let dir: string;
let gslbd: RunningGslbd;
let pdns: PdnsServer;
let standalonePort: number;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gslbd-static-types-'));
  standalonePort = await freePort();
  const records = RECORDS.map(([name, type, data]) => `      - { name: ${JSON.stringify(name)}, type: ${type}, data: ${JSON.stringify(data)} }`);
  writeFileSync(
    join(dir, 'gslbd.yaml'),
    [
      'listeners:',
      `  dns: [{ address: 127.0.0.1, port: ${standalonePort} }]`,
      '  powerdns: { path: gslbd.sock }',
      'zones:',
      '  - name: example.test',
      '    soa: { mname: ns1.example.test, rname: hostmaster.example.test, serial: 1 }',
      '    ns: [ns1.example.test]',
      '    records:',
      '      - { name: ns1, type: A, data: 192.0.2.53 }',
      ...records,
      '',
    ].join('\n'),
  );
  gslbd = await startGslbd(join(dir, 'gslbd.yaml'), { signals: false, watchFile: false, logDestination: openSync(join(dir, 'gslbd.log'), 'a') });
  pdns = await startPdns({ socketPath: join(dir, 'gslbd.sock'), instance: 'static-types' });
});

test.after.always(async () => {
  await pdns?.stop();
  await gslbd?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

for (const [name, type, data] of RECORDS.filter(([, t]) => t !== 'NS')) {
  test(`${type} at ${name}: the standalone listener and PowerDNS answer the configured data`, async (t) => {
    const qname = `${name}.example.test`;
    for (const [door, server] of [
      ['standalone', { address: '127.0.0.1', port: standalonePort }],
      ['PowerDNS', { address: '127.0.0.1', port: pdns.port }],
    ] as const) {
      const r = await dig(server, [qname, type]);
      t.is(r.status, 'NOERROR', `${door}: ${r.output}`);
      t.is(r.answer.length, 1, `${door}: ${r.output}`);
      t.is(r.answer[0]!.type, type, door);
      t.deepEqual(parseRecordData(type, r.answer[0]!.data), parseRecordData(type, data), `${door} answered ${r.answer[0]!.data}`);
    }
  });
}
