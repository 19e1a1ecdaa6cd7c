import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ConfigError } from '../../core/config/load.js';
import { parseConfigText } from '../../process/loadConfig.js';

/**
 * Issue 23, item 4: a zone's static records from an RFC 1035 zone file. The fixture
 * (`test/fixtures/zoneFile/example.test.zone`) uses each syntax feature: `$TTL` with units, `@`,
 * relative names, omitted owners, TTL and class omitted or in either order, parentheses over
 * lines with comments, quoted strings with escapes, `$ORIGIN`; and every served type.
 */

const FIXTURE = join(import.meta.dirname, '../../../test/fixtures/zoneFile/example.test.zone');

/** A configuration in a fresh folder whose zone names `zone.txt` holding `text`. */
function withZoneFile(
  t: { teardown(f: () => void): void },
  text: string,
  zoneYaml = '',
): { dir: string; file: string; parse: () => ReturnType<typeof parseConfigText> } {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-zonefile-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'zone.txt'), text);
  const file = join(dir, 'gslbd.yaml');
  writeFileSync(file, `zones:\n  - name: example.test\n    zoneFile: zone.txt\n${zoneYaml}`);
  return { dir, file, parse: () => parseConfigText(`zones:\n  - name: example.test\n    zoneFile: zone.txt\n${zoneYaml}`, file) };
}

/** The zone's records as comparable rows (`name ttl type data`, octets in hex), sorted. */
function rows(config: ReturnType<typeof parseConfigText>): string[] {
  return config.zones[0]!.records.map(
    (r) =>
      `${r.name} ${r.ttl} ${r.type} ${JSON.stringify(r.data, (_k, v: unknown) => (v && typeof v === 'object' && (v as { type?: string }).type === 'Buffer' ? Buffer.from((v as { data: number[] }).data).toString('hex') : v))}`,
  ).sort();
}

test('a zone file with every syntax feature: exact records, SOA and NS', (t) => {
  const config = withZoneFile(t, readFileSync(FIXTURE, 'utf8')).parse();
  const zone = config.zones[0]!;
  t.like(zone.soa, {
    mname: 'ns1.example.test',
    rname: 'hostmaster.example.test',
    serial: 2024010101,
    refresh: 3600,
    retry: 600,
    expire: 604800,
    minimum: 60,
    ttl: 3600,
  });
  t.deepEqual([...zone.ns].sort(), ['ns1.example.test', 'ns2.example.test']);
  t.deepEqual(rows(config), [
    '1.2 3600 PTR "host.example.test"',
    '@ 3600 CAA {"flags":0,"tag":"issue","value":"ca.example"}',
    '@ 3600 MX {"preference":10,"exchange":"mail.example.test"}',
    '_443._tcp.www 3600 TLSA {"usage":3,"selector":1,"matchingType":1,"certificate":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}',
    '_sip._tcp 3600 SRV {"priority":10,"weight":20,"port":5060,"target":"sip.example.test"}',
    'alias 3600 CNAME "www.example.test"',
    'mail 3600 A "192.0.2.25"',
    'naptr 3600 NAPTR {"order":100,"preference":10,"flags":"S","services":"SIP+D2U","regexp":"","replacement":"_sip._udp.example.test"}',
    'ns1 3600 A "192.0.2.53"',
    'ns2 300 A "192.0.2.54"',
    'sub 3600 DS {"keyTag":12345,"algorithm":13,"digestType":2,"digest":"2bb183af5f22588179a53b0a98631fad1a2921182bb183af5f22588179a53b0a"}',
    'svc 3600 SVCB {"priority":1,"target":"","params":[{"key":1,"value":"026832026833"},{"key":3,"value":"20fb"}]}',
    'txt 3600 TXT ["hello \\"world\\"","plain","a;b\\\\c"]',
    'web.svc 3600 HTTPS {"priority":0,"target":"www.example.test","params":[]}',
    'www 3600 AAAA "2001:db8::1"',
    'www 3600 SSHFP {"algorithm":4,"hash":2,"fingerprint":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}',
    'www 600 A "192.0.2.1"',
  ]);
});

test("BIND as the oracle: named-compilezone's canonical output of the file parses to the same zone", async (t) => {
  const text = readFileSync(FIXTURE, 'utf8');
  let canonical: string;
  try {
    canonical = (await promisify(execFile)('named-compilezone', ['-q', '-o', '-', 'example.test', FIXTURE])).stdout;
  } catch (e) {
    if (process.env.CI === 'true' || (e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    t.pass('named-compilezone (bind9-utils) is not installed');
    return;
  }
  const ours = withZoneFile(t, text).parse();
  const bind = withZoneFile(t, canonical).parse();
  t.deepEqual(rows(bind), rows(ours));
  t.deepEqual(bind.zones[0]!.soa, ours.zones[0]!.soa);
  t.deepEqual([...bind.zones[0]!.ns].sort(), [...ours.zones[0]!.ns].sort());
});

test('problems name the zone file and line; $INCLUDE is refused', (t) => {
  const bad = withZoneFile(
    t,
    [
      '$TTL 300',
      '@ SOA ns1 hostmaster 1 2 3 4 5',
      '@ NS ns1',
      'ns1 A 192.0.2.1',
      'www A 300.1.1.1',
      '$INCLUDE other.zone',
      'x.other.test. A 192.0.2.2',
      'y HINFO "a" "b"',
      'z ( A',
      '192.0.2.3 )',
      'q MX ( 10',
      ' mail ) bad',
    ].join('\n') + '\n',
  );
  const e = t.throws(() => bad.parse(), { instanceOf: ConfigError })!;
  t.deepEqual(
    (e as ConfigError).problems.map((p) => `${p.path}: ${p.message}`),
    [
      'zones[0].zoneFile: zone.txt:5: A: "300.1.1.1" is not an IPv4 address',
      'zones[0].zoneFile: zone.txt:6: $INCLUDE is not supported: name each file in the configuration',
      'zones[0].zoneFile: zone.txt:7: "x.other.test" is outside the zone example.test',
      'zones[0].zoneFile: zone.txt:8: type HINFO is not served as a static record (A, AAAA, CNAME, NS, MX, TXT, SRV, PTR, CAA, DS, TLSA, SSHFP, NAPTR, SVCB, HTTPS)',
      'zones[0].zoneFile: zone.txt:11: MX: MX data is "preference exchange"',
    ],
  );
  t.regex(e.message, /gslbd\.yaml: zones\[0\]\.zoneFile: zone\.txt:5: /);
});

test("a zone that sets soa and ns keeps them; the file's must agree", (t) => {
  const text = '$TTL 300\n@ SOA ns1 hostmaster 1 2 3 4 5\n@ NS ns1\nwww A 192.0.2.1\n';
  const agree = withZoneFile(t, text, '    soa: { mname: ns1.example.test, rname: hostmaster.example.test, serial: 7 }\n    ns: [ns1.example.test]\n').parse();
  t.is(agree.zones[0]!.soa.serial, 7);
  t.deepEqual(rows(agree), ['www 300 A "192.0.2.1"']);
  const differ = withZoneFile(t, text, '    soa: { mname: ns9.example.test, rname: hostmaster.example.test }\n    ns: [ns9.example.test]\n');
  const e = t.throws(() => differ.parse(), { instanceOf: ConfigError })!;
  t.deepEqual(
    (e as ConfigError).problems.map((p) => p.message.split(' (')[0]),
    ["zone.txt:2: the file's SOA", "zone.txt:3: the file's apex NS"],
  );
});

test('a missing zone file and one that is not a regular file are configuration problems', (t) => {
  const { dir, parse } = withZoneFile(t, '');
  rmSync(join(dir, 'zone.txt'));
  t.throws(() => parse(), { instanceOf: ConfigError, message: /zones\[0\]\.zoneFile: cannot read/ });
  writeFileSync(join(dir, 'zone.txt'), '');
  rmSync(join(dir, 'zone.txt'));
  // A directory at the path: the regular-file rule of the configuration file.
  mkdirSync(join(dir, 'zone.txt'));
  t.throws(() => parse(), { instanceOf: ConfigError, message: /zones\[0\]\.zoneFile: .*is not a regular file \(a directory\)/ });
});

test("a zone file's problems and the YAML's schema problems are reported in one run", (t) => {
  const { parse } = withZoneFile(t, '$TTL 300\n@ SOA ns1 hostmaster 1 2 3 4 5\n@ NS ns1\nwww A 1.2.3\n', '    ttl: -1\n');
  const e = t.throws(() => parse(), { instanceOf: ConfigError })!;
  t.deepEqual(
    (e as ConfigError).problems.map((p) => `${p.path}: ${p.message}`),
    ['zones[0].zoneFile: zone.txt:4: A: "1.2.3" is not an IPv4 address', 'zones[0].ttl: Too small: expected number to be >=0'],
  );
});

test("problems found after parsing name the zone file's line and column: CNAME beside data, a signed zone's DS, a duplicate's first place, a bad owner", (t) => {
  const text = [
    '$TTL 300',
    '@ SOA ns1 hostmaster 1 2 3 4 5',
    '@ NS ns1',
    'ns1 A 192.0.2.1',
    'www A 192.0.2.2',
    '  CNAME ns1',
    'sub DS 12345 13 2 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
    'sub NS ns1.other.test.',
    'app A 192.0.2.4',
  ].join('\n');
  const yaml = [
    '    records:',
    '      - { name: yaml, type: A, data: 192.0.2.9 }',
    'datacenters: [{ name: fra1, location: EU.DE }]',
    'services: [{ name: web, endpoints: [{ dc: fra1, address: 192.0.2.10 }] }]',
    'records:',
    '  - { name: app.example.test, type: A, service: web, policy: { type: static, rules: [{ dcs: [fra1] }] } }',
    'dnssec:',
    '  zones: [{ zone: example.test, keys: [Kexample.test] }]',
    '',
  ].join('\n');
  const e = t.throws(() => withZoneFile(t, `${text}\n`, yaml).parse(), { instanceOf: ConfigError })!;
  t.deepEqual(
    (e as ConfigError).problems.map((p) => `${p.path}: ${p.message}`),
    [
      'zones[0].zoneFile: zone.txt:6:3: a CNAME cannot share the name "www.example.test" with other records',
      // A YAML record duplicating one from the file names the file's line as the first definition.
      'records[0].name: "app.example.test" A is defined twice (first defined at zone.txt:9:1)',
      'zones[0].zoneFile: zone.txt:7:1: type: a DS record in the signed zone "example.test" is not supported yet',
    ],
  );
  t.regex(e.message, /gslbd\.yaml: zones\[0\]\.zoneFile: zone\.txt:6:3: /);
  // A schema problem of a record from the file (its owner), with the YAML's own schema problem.
  const bad = withZoneFile(t, `$TTL 300\n@ SOA ns1 hostmaster 1 2 3 4 5\n@ NS ns1\n${'x'.repeat(64)} A 192.0.2.3\n`, '    ttl: -1\n');
  t.deepEqual(
    (t.throws(() => bad.parse(), { instanceOf: ConfigError }) as ConfigError).problems.map((p) => `${p.path}: ${p.message}`),
    ['zones[0].ttl: Too small: expected number to be >=0', `zones[0].zoneFile: zone.txt:4:1: name: "${'x'.repeat(64)}" has a label longer than 63 characters`],
  );
});
