import test from 'ava';
import { json11Line } from '../../../test/support/json11.js';
import { parseLookupLine } from './lookupLine.js';
import { replaceOnce } from '../../../test/support/replaceOnce.js';

/** A lookup line as PowerDNS writes it; `zoneId` as raw JSON text. */
function json11(qname: string, qtype = 'ANY', realRemote = '8.8.8.0/24', remote = '127.0.0.1', zoneId: string | number = 1, local = '127.0.0.1'): string {
  return json11Line('lookup', { local, qname, qtype, 'real-remote': realRemote, remote, 'zone-id': 0 }).replace(/"zone-id": 0}}$/, `"zone-id": ${zoneId}}}`);
}

/** What the JSON.parse path reads from the same line, in parseLookupLine's shape. */
function viaJsonParse(line: string): unknown {
  const p = (JSON.parse(line) as { parameters: Record<string, unknown> }).parameters;
  return { qname: p.qname, qnameJson: JSON.stringify(p.qname), qtype: p.qtype, realRemote: p['real-remote'], remote: p.remote, zoneId: p['zone-id'] };
}

test('lookup lines as PowerDNS writes them are read exactly as JSON.parse reads them', (t) => {
  const lines = [
    json11('example.test.', 'ANY', '0.0.0.0/0', '0.0.0.0', 1, '0.0.0.0'),
    json11('www.example.test.', 'ANY', '127.0.0.1/32', '127.0.0.1', -1),
    json11('WwW.Example.TEST.', 'ANY', '2001:db8:1234::/48', '::1', 744470781),
    json11('a.www.example.test.', 'SOA', '0.0.0.0/0', '0.0.0.0', -1, '0.0.0.0'),
    json11('*.example.test.', 'A', '::ffff:1.2.3.0/120', '::ffff:127.0.0.1', 0),
    json11('www.example.test.', 'ANY', '1.2.3.0/24', '127.0.0.1', 999999999),
    json11('www.example.test.', 'ANY', '1.2.3.0/24', '127.0.0.1', -999999999),
    json11('ünïcödé.example.test.', 'TXT', '', '', 7, ''),
    json11("it's <a> name/with&odd'chars.", 'ANY'),
  ];
  for (const line of lines) {
    const fast = parseLookupLine(line);
    t.truthy(fast, line);
    t.deepEqual(fast, viaJsonParse(line), line);
  }
  t.is(parseLookupLine(json11('x.', 'ANY', 'a', 'b', '-0'))?.zoneId, -0, '-0 as JSON.parse reads it');
});

test('lines of any other shape are left to JSON.parse', (t) => {
  const s = JSON.stringify;
  const others = [
    // escapes, control characters and surrogates in a string
    json11('a\\.b.example.test.'),
    json11('a"b.example.test.'),
    json11('a\u0001b.'),
    replaceOnce(json11('a\u2028b.'), '\u2028', '\\u2028'),
    json11('emoji\u{1F600}.'),
    json11('lone\ud800.'),
    // zone ids that are not plain 9-digit integers
    json11('x.', 'ANY', 'a', 'b', '01'),
    json11('x.', 'ANY', 'a', 'b', '1.5'),
    json11('x.', 'ANY', 'a', 'b', '1e3'),
    json11('x.', 'ANY', 'a', 'b', '1234567890'),
    json11('x.', 'ANY', 'a', 'b', '-'),
    json11('x.', 'ANY', 'a', 'b', '"1"'),
    json11('x.', 'ANY', 'a', 'b', ' 1'),
    json11('x.', 'ANY', 'a', 'b', ''),
    // other spellings, keys, methods, trailing text
    s({ method: 'lookup', parameters: { local: 'l', qname: 'x.', qtype: 'ANY', 'real-remote': 'a', remote: 'b', 'zone-id': 1 } }),
    replaceOnce(json11('x.'), '"local": "127.0.0.1", ', ''),
    replaceOnce(json11('x.'), '}}', ', "extra": 1}}'),
    `${json11('x.')} `,
    `${json11('x.')}}`,
    replaceOnce(json11('x.'), '"method": "lookup"', '"method": "list"'),
    json11('x.').slice(0, -3),
    '{"method": "lookup", "parameters": {"local": "',
    '',
  ];
  for (const line of others) t.is(parseLookupLine(line), undefined, line);
});

test('every truncation and every one-character change of a lookup line is read as JSON.parse reads it, or left to it', (t) => {
  const base = json11('www.example.test.', 'ANY', '81.2.69.0/24', '127.0.0.1', 744470781);
  const variants: string[] = [];
  for (let i = 0; i <= base.length; i++) variants.push(base.slice(0, i));
  for (let i = 0; i < base.length; i++) {
    for (const c of ['"', '\\', ' ', '}', '0', '-', 'x', '\u0000', 'é']) variants.push(base.slice(0, i) + c + base.slice(i + 1));
  }
  let fast = 0;
  for (const line of variants) {
    const got = parseLookupLine(line);
    if (got === undefined) continue;
    fast++;
    let expected: unknown;
    try {
      expected = viaJsonParse(line);
    } catch {
      t.fail(`read a line JSON.parse rejects: ${line}`);
      continue;
    }
    t.deepEqual(got, expected, line);
  }
  t.true(fast > 100, `${fast} variants were read without JSON.parse`);
});
