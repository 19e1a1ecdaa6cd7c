import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { presentData } from '../../core/dns/presentation.js';
import { TYPE_CODES, type AnswerRecord } from '../../core/dns/records.js';
import { readKeyPair } from './keyFiles.js';
import { labelCount, rrsigOf } from './rrsig.js';

/**
 * The canonical form is proven against BIND: `dnssec-signzone` signs a zone with an Ed25519 key
 * (deterministic signatures, RFC 8032), and gslbd's RRSIG of each RRset, over the same window
 * with the same key, must be the very same bytes — owner and RDATA names lower-cased, records
 * sorted by RDATA, duplicates once, type bit maps, every record type the engine serves.
 */

const ZONE = 'example.test';
const INCEPTION = Date.UTC(2026, 0, 1) / 1000;
const EXPIRATION = Date.UTC(2026, 1, 1) / 1000;

/** The zone's records as the engine holds them (canonical names), in the order written. */
const RECORDS: AnswerRecord[] = [
  {
    name: ZONE,
    type: 'SOA',
    ttl: 300,
    data: { mname: 'ns1.example.test', rname: 'hostmaster.example.test', serial: 1, refresh: 3600, retry: 600, expire: 604800, minimum: 60 },
  },
  { name: ZONE, type: 'NS', ttl: 300, data: 'ns1.example.test' },
  { name: ZONE, type: 'MX', ttl: 300, data: { preference: 10, exchange: 'mail.example.test' } },
  { name: 'ns1.example.test', type: 'A', ttl: 300, data: '192.0.2.53' },
  // Out of canonical order and with a duplicate: the signature covers 10.0.0.1, 192.0.2.1, 192.0.2.3 once each.
  { name: 'multi.example.test', type: 'A', ttl: 300, data: '192.0.2.3' },
  { name: 'multi.example.test', type: 'A', ttl: 300, data: '192.0.2.1' },
  { name: 'multi.example.test', type: 'A', ttl: 300, data: '10.0.0.1' },
  { name: 'multi.example.test', type: 'A', ttl: 300, data: '192.0.2.1' },
  { name: 'v6.example.test', type: 'AAAA', ttl: 300, data: '2001:db8::10' },
  { name: 'srv.example.test', type: 'SRV', ttl: 300, data: { priority: 1, weight: 2, port: 3, target: 't.example.test' } },
  { name: 'txt.example.test', type: 'TXT', ttl: 300, data: ['hello', 'World'] },
  { name: 'caa.example.test', type: 'CAA', ttl: 300, data: { flags: 0, tag: 'issue', value: 'ca.example' } },
  { name: 'alias.example.test', type: 'CNAME', ttl: 300, data: 'www.example.test' },
  { name: 'ptr.example.test', type: 'PTR', ttl: 300, data: 'host.example.test' },
];

/** RRSIGs dnssec-signzone wrote, by `owner type-covered`: their signature bytes. */
function bindSignatures(signedZone: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const line of signedZone.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f[3] !== 'RRSIG') continue;
    out.set(`${f[0]!.replace(/\.$/, '').toLowerCase()} ${f[4]}`, Buffer.from(f.slice(12).join(''), 'base64'));
  }
  return out;
}

test('gslbd signs every RRset with the very bytes dnssec-signzone does (Ed25519, canonical form of RFC 4034 §6)', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-rrsig-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  let base: string;
  try {
    base = execFileSync('dnssec-keygen', ['-q', '-C', '-K', dir, '-a', 'ED25519', ZONE], { encoding: 'utf8' }).trim();
  } catch (e) {
    throw new Error(`dnssec-keygen failed (bash test/setup.sh installs bind9-utils): ${(e as Error).message}`);
  }
  // Names in RDATA written in mixed case: BIND lower-cases them for signing, as the canonical form requires.
  const zoneText = [
    '$TTL 300',
    ...RECORDS.map((r) => `${r.name}. ${r.ttl} IN ${r.type} ${presentData(r.type, r.data).replace('mail.example.test', 'Mail.Example.TEST')}`),
    readFileSync(join(dir, `${base}.key`), 'utf8'),
  ].join('\n');
  writeFileSync(join(dir, 'zone'), zoneText);
  const stamp = (s: number): string => new Date(s * 1000).toISOString().replace(/[-:T]/g, '').slice(0, 14);
  execFileSync(
    'dnssec-signzone',
    [
      '-P',
      '-x',
      '-O',
      'full',
      '-K',
      dir,
      '-s',
      stamp(INCEPTION),
      '-e',
      stamp(EXPIRATION),
      '-o',
      ZONE,
      '-f',
      join(dir, 'signed'),
      join(dir, 'zone'),
      join(dir, base),
    ],
    {
      cwd: dir,
      stdio: 'pipe',
    },
  );
  const signedZone = readFileSync(join(dir, 'signed'), 'utf8');
  const bind = bindSignatures(signedZone);
  const { key } = readKeyPair(join(dir, base), ZONE);
  // Every RRset of the zone, and the NSEC and DNSKEY RRsets BIND added, as the engine would hold them.
  const rrsets = new Map<string, AnswerRecord[]>();
  const add = (r: AnswerRecord): void => {
    const k = `${r.name} ${r.type}`;
    rrsets.set(k, [...(rrsets.get(k) ?? []), r]);
  };
  RECORDS.forEach(add);
  for (const line of signedZone.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f[3] === 'NSEC') {
      add({
        name: f[0]!.replace(/\.$/, ''),
        type: 'NSEC',
        ttl: Number(f[1]),
        data: { nextName: f[4]!.replace(/\.$/, ''), types: f.slice(5).map((x) => TYPE_CODES[x as 'A']) },
      });
    }
  }
  add({ name: ZONE, type: 'DNSKEY', ttl: 300, data: key.dnskey });
  t.true(rrsets.size >= RECORDS.length - 3 + 1);
  for (const [k, rrset] of rrsets) {
    const ours = rrsigOf(rrset, key, ZONE, { inception: INCEPTION, expiration: EXPIRATION });
    t.is(ours.labels, labelCount(rrset[0]!.name));
    t.deepEqual(ours.signature.toString('base64'), bind.get(k)?.toString('base64'), k);
  }
});

test('the Labels field leaves out a leading * and the root (RFC 4034 §3.1.3)', (t) => {
  t.is(labelCount('www.example.test'), 3);
  t.is(labelCount('*.wild.example.test'), 3);
  t.is(labelCount('WWW.Example.Test.'), 3);
  t.is(labelCount('a\\.b.example.test'), 3, 'an escaped dot is inside a label');
  t.is(labelCount(''), 0);
});
