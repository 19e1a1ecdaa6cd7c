import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import { rdataBytes } from '../wire/wireResponse.js';
import { parseRecordData, presentData } from './presentation.js';
import { TYPE_CODES, type RecordType } from './records.js';

/**
 * DS, TLSA, SSHFP, NAPTR, SVCB and HTTPS as static records: presentation text → data → the same
 * text, the wire RDATA against RFC 9460 Appendix D's test vectors and dns-packet's decoders, and
 * BIND's own reading of the same zone (named-checkzone) parsed back to the same data.
 */

const SHA256 = '2BB183AF5F22588179A53B0A98631FAD1A292118A5F84E1F3A62E9A04A5B2C4C';
const SHA1 = '123456789ABCDEF67890123456789ABCDEF67890';

/** Presentation text as presentData writes it: parsing it and writing it again gives the same text. */
const CANONICAL: [RecordType, string][] = [
  ['DS', `60485 13 2 ${SHA256}`],
  ['TLSA', `3 1 1 ${SHA256}`],
  ['TLSA', '0 0 0 308201A2'],
  ['SSHFP', `4 2 ${SHA256}`],
  ['SSHFP', `1 1 ${SHA1}`],
  ['NAPTR', '100 10 "S" "SIP+D2U" "" _sip._udp.example.test.'],
  ['NAPTR', '100 50 "U" "E2U+sip" "!^.*$!sip:info@example.test!" .'],
  ['NAPTR', '1 1 "a" "quote\\"back\\\\slash\\009tab\\255" "" .'],
  ['SVCB', '0 svc.example.test.'],
  ['SVCB', '1 .'],
  ['SVCB', '16 foo.example.test. port=53'],
  ['SVCB', '1 foo.example.test. key667="hello"'],
  ['SVCB', '1 foo.example.test. key667="hello\\210qoo"'],
  ['SVCB', '1 foo.example.test. ipv6hint=2001:db8::1,2001:db8::53:1'],
  ['SVCB', '16 foo.example.org. mandatory=alpn,ipv4hint alpn=h2,h3-19 ipv4hint=192.0.2.1'],
  ['HTTPS', '1 . alpn=h3,h2 no-default-alpn port=8443 ipv4hint=192.0.2.1,192.0.2.2 ech=AEX+DQBBpQAgACBm ipv6hint=2001:db8::1'],
  ['HTTPS', '1 . alpn="h2,with space"'],
];

for (const [type, text] of CANONICAL) {
  test(`${type} ${text}: parsed and written back exactly`, (t) => {
    const data = parseRecordData(type, text);
    t.is(presentData(type, data), text);
    t.deepEqual(parseRecordData(type, presentData(type, data)), data);
  });
}

/** Text that is not canonical reads as the canonical text (case, spacing, key order, quotes, split hex). */
const EQUIVALENT: [RecordType, string, string][] = [
  ['DS', `60485 13 2 ${SHA256.slice(0, 20).toLowerCase()} ${SHA256.slice(20)}`, `60485 13 2 ${SHA256}`],
  ['TLSA', `3 1 1 ${SHA256.toLowerCase()}`, `3 1 1 ${SHA256}`],
  ['NAPTR', '100 10 S SIP+D2U "" _sip._udp.EXAMPLE.test', '100 10 "S" "SIP+D2U" "" _sip._udp.example.test.'],
  [
    'SVCB',
    '16 foo.example.org. ipv4hint=192.0.2.1 alpn="h2,h3-19" mandatory=ipv4hint,alpn',
    '16 foo.example.org. mandatory=alpn,ipv4hint alpn=h2,h3-19 ipv4hint=192.0.2.1',
  ],
  ['HTTPS', '1 . port="8443"', '1 . port=8443'],
  ['SVCB', '1 foo.example.test. key667=hello', '1 foo.example.test. key667="hello"'],
];

for (const [type, input, canonical] of EQUIVALENT) {
  test(`${type} ${input}: reads as ${canonical}`, (t) => {
    t.is(presentData(type, parseRecordData(type, input)), canonical);
  });
}

const INVALID: [RecordType, string, RegExp][] = [
  ['DS', '60485 13 2 ABC', /even number of hexadecimal digits/],
  ['DS', '60485 13 2', /DS data is/],
  ['SSHFP', '4 2 ABCD', /type 2 is 32 octets/],
  ['TLSA', '3 1 1 XYZ0', /hexadecimal/],
  ['NAPTR', '100 10 "S" "SIP+D2U" "" ', /NAPTR data is/],
  ['NAPTR', '100 10 "S "SIP+D2U" "" .', /./],
  ['SVCB', '0 svc.example.test. alpn=h2', /alias-form SVCB/],
  ['SVCB', '1 . port=53 port=54', /given twice/],
  ['SVCB', '1 . mandatory=port', /not given/],
  ['SVCB', '1 . key65535=x', /unknown SvcParam key/],
  ['SVCB', '1 . flavour=x', /unknown SvcParam key/],
  ['HTTPS', '1 . ipv4hint=2001:db8::1', /not an IPv4 address/],
  ['HTTPS', '1 . no-default-alpn=x', /takes no value/],
];

for (const [type, text, message] of INVALID) {
  test(`${type} ${text}: refused`, (t) => {
    t.throws(() => parseRecordData(type, text), { message });
  });
}

/** RFC 9460 Appendix D: presentation form and wire RDATA (hex), with our names. */
const RFC9460_VECTORS: [RecordType, string, string][] = [
  ['HTTPS', '0 foo.example.com', '0000 03666f6f076578616d706c6503636f6d00'],
  ['SVCB', '1 .', '0001 00'],
  ['SVCB', '16 foo.example.com port=53', '0010 03666f6f076578616d706c6503636f6d00 0003 0002 0035'],
  ['SVCB', '1 foo.example.com key667=hello', '0001 03666f6f076578616d706c6503636f6d00 029b 0005 68656c6c6f'],
  ['SVCB', '1 foo.example.com key667="hello\\210qoo"', '0001 03666f6f076578616d706c6503636f6d00 029b 0009 68656c6c6fd271 6f6f'],
  [
    'SVCB',
    '1 foo.example.com ipv6hint="2001:db8::1,2001:db8::53:1"',
    '0001 03666f6f076578616d706c6503636f6d00 0006 0020 20010db8000000000000000000000001 20010db8000000000000000000530001',
  ],
  [
    'SVCB',
    '16 foo.example.org alpn=h2,h3-19 mandatory=ipv4hint,alpn ipv4hint=192.0.2.1',
    '0010 03666f6f076578616d706c65036f726700 0000 0004 00010004 0001 0009 026832 0568332d3139 0004 0004 c0000201',
  ],
];

for (const [type, text, hex] of RFC9460_VECTORS) {
  test(`${type} ${text}: the wire RDATA of RFC 9460 Appendix D`, (t) => {
    const rdata = rdataBytes(type, parseRecordData(type, text));
    const expected = Buffer.from(hex.replace(/\s/g, ''), 'hex');
    t.is(rdata.readUInt16BE(0), expected.length);
    t.is(rdata.subarray(2).toString('hex'), expected.toString('hex'));
  });
}

test('DS, TLSA, SSHFP and NAPTR RDATA decode with dns-packet to the same fields', (t) => {
  const decode = (type: RecordType, text: string): unknown => {
    const rdata = rdataBytes(type, parseRecordData(type, text));
    // A response with one answer at the root: header (one answer), owner, type, class IN, TTL, then our RDLENGTH and RDATA.
    const header = Buffer.from('000181000000000100000000', 'hex');
    const rr = Buffer.alloc(9);
    rr.writeUInt16BE(TYPE_CODES[type], 1);
    rr.writeUInt16BE(1, 3);
    rr.writeUInt32BE(60, 5);
    return (dnsPacket.decode(Buffer.concat([header, rr, rdata])).answers![0] as { data: unknown }).data;
  };
  t.like(decode('DS', `60485 13 2 ${SHA256}`), { keyTag: 60485, algorithm: 13, digestType: 2, digest: Buffer.from(SHA256, 'hex') });
  t.like(decode('TLSA', `3 1 1 ${SHA256}`), { usage: 3, selector: 1, matchingType: 1, certificate: Buffer.from(SHA256, 'hex') });
  t.like(decode('SSHFP', `4 2 ${SHA256}`), { algorithm: 4, hash: 2, fingerprint: SHA256 });
  t.like(decode('NAPTR', '100 10 "S" "SIP+D2U" "" _sip._udp.example.test.'), {
    order: 100,
    preference: 10,
    flags: 'S',
    services: 'SIP+D2U',
    regexp: '',
    replacement: '_sip._udp.example.test',
  });
});

test("named-checkzone (BIND) loads a zone file of our presentation text, and BIND's own text of it parses back to the same data", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-zonefile-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const lines = CANONICAL.map(([type, text], i) => `r${i}.example.test. 300 IN ${type} ${text}`);
  const file = join(dir, 'example.test.zone');
  writeFileSync(
    file,
    [
      'example.test. 300 IN SOA ns1.example.test. hostmaster.example.test. 1 3600 600 604800 60',
      'example.test. 300 IN NS ns1.example.test.',
      'ns1.example.test. 300 IN A 192.0.2.53',
      ...lines,
      '',
    ].join('\n'),
  );
  const dumped = await new Promise<string>((resolve, reject) =>
    execFile('named-checkzone', ['-D', '-o', '-', 'example.test', file], (err, stdout, stderr) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT')
        return reject(new Error('named-checkzone is not installed (bash test/setup.sh installs bind9-utils)'));
      if (err) return reject(new Error(`named-checkzone refused the zone: ${stdout}${stderr}`));
      resolve(stdout);
    }),
  );
  // BIND writes `owner ttl IN TYPE rdata`; its rdata text is its own (SVCB keys, hex case, spacing).
  const byOwner = new Map<string, [string, string]>();
  for (const line of dumped.split('\n')) {
    const m = /^(r\d+)\.example\.test\.\s+\d+\s+IN\s+(\S+)\s+(.*)$/.exec(line);
    if (m) byOwner.set(m[1]!, [m[2]!, m[3]!]);
  }
  t.is(byOwner.size, CANONICAL.length, dumped);
  CANONICAL.forEach(([type, text], i) => {
    const [bindType, bindText] = byOwner.get(`r${i}`)!;
    t.is(bindType, type);
    t.deepEqual(parseRecordData(type, bindText), parseRecordData(type, text), `BIND wrote ${bindText}`);
  });
});
