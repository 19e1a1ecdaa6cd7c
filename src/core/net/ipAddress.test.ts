import test from 'ava';
import {
  addressFromBytes,
  addressToBytes,
  canonicalIfIpText,
  canonicalIpText,
  formatIp,
  ipv4,
  ipv6,
  maskAddress,
  maskWord,
  parseCidr,
  parseIp,
  sameAddress,
  type IpAddress,
} from './ipAddress.js';

const words = (a: IpAddress): [number, number, number, number, number, boolean] => [a.family, a.w0, a.w1, a.w2, a.w3, a.mapped];

const parseCases: [text: string, family: 4 | 6, w0: number, w1: number, w2: number, w3: number, mapped: boolean][] = [
  ['192.0.2.1', 4, 0xc0000201, 0, 0, 0, false],
  ['0.0.0.0', 4, 0, 0, 0, 0, false],
  ['255.255.255.255', 4, 0xffffffff, 0, 0, 0, false],
  ['2001:db8::1', 6, 0x20010db8, 0, 0, 1, false],
  ['::', 6, 0, 0, 0, 0, false],
  ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 6, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, false],
  // IPv4-mapped IPv6 folds to IPv4 in both notations (issue 2 §5).
  ['::ffff:192.0.2.1', 4, 0xc0000201, 0, 0, 0, true],
  ['::FFFF:c000:201', 4, 0xc0000201, 0, 0, 0, true],
  // IPv4-compatible (deprecated) and NAT64 addresses are not mapped: they stay IPv6.
  ['::192.0.2.1', 6, 0, 0, 0, 0xc0000201, false],
  ['64:ff9b::192.0.2.1', 6, 0x0064ff9b, 0, 0, 0xc0000201, false],
];

for (const [text, family, w0, w1, w2, w3, mapped] of parseCases) {
  test(`parseIp ${text}`, (t) => {
    t.deepEqual(words(parseIp(text)), [family, w0, w1, w2, w3, mapped]);
  });
}

for (const bad of ['1.2.3', '256.1.1.1', '::ffff:256.1.1.1', '::ffff:1.2.3', '1.2.3.4.5', 'fe80::1%eth0', '2001:db8:::1', '', 'example.test', '1.2.3.4/24']) {
  test(`parseIp rejects "${bad}"`, (t) => {
    t.throws(() => parseIp(bad), { message: `"${bad}" is not an IPv4 or IPv6 address` });
  });
}

const formatCases: [text: string, formatted: string][] = [
  ['192.0.2.1', '192.0.2.1'],
  ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
  ['::', '::'],
  ['::1', '::1'],
  ['2001:db8:0:1::', '2001:db8:0:1::'],
  ['::ffff:198.51.100.7', '198.51.100.7'],
];
for (const [text, formatted] of formatCases) {
  test(`formatIp(parseIp(${text})) = ${formatted}`, (t) => {
    t.is(formatIp(parseIp(text)), formatted);
  });
}

test('maskWord keeps the leading bits, clamped to 0–32', (t) => {
  t.deepEqual([-5, 0, 1, 8, 24, 31, 32, 40].map(maskWord), [0, 0, 0x80000000, 0xff000000, 0xffffff00, 0xfffffffe, 0xffffffff, 0xffffffff]);
});

const maskCases: [address: string, prefix: number, masked: string][] = [
  ['10.20.30.40', 0, '0.0.0.0'],
  ['10.20.30.40', 8, '10.0.0.0'],
  ['10.20.30.40', 18, '10.20.0.0'],
  ['10.20.30.40', 20, '10.20.16.0'],
  ['10.20.30.40', 32, '10.20.30.40'],
  ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff', 0, '::'],
  ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff', 32, '2001:db8::'],
  ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff', 33, '2001:db8:8000::'],
  ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff', 48, '2001:db8:aaaa::'],
  ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff', 64, '2001:db8:aaaa:bbbb::'],
  ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff', 100, '2001:db8:aaaa:bbbb:cccc:dddd:e000:0'],
  ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff', 127, '2001:db8:aaaa:bbbb:cccc:dddd:eeee:fffe'],
  ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff', 128, '2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff'],
];
for (const [address, prefix, masked] of maskCases) {
  test(`maskAddress ${address}/${prefix} = ${masked}`, (t) => {
    t.is(formatIp(maskAddress(parseIp(address), prefix)), masked);
  });
}

const cidrCases: [text: string, address: string, prefix: number, mapped: boolean][] = [
  ['10.0.0.0/8', '10.0.0.0', 8, false],
  ['192.0.2.7', '192.0.2.7', 32, false],
  ['0.0.0.0/0', '0.0.0.0', 0, false],
  ['2001:db8::/32', '2001:db8::', 32, false],
  ['2001:db8::1', '2001:db8::1', 128, false],
  // IPv4-mapped prefixes become IPv4 prefixes of length − 96.
  ['::ffff:10.0.0.0/104', '10.0.0.0', 8, true],
  ['::ffff:192.0.2.0/120', '192.0.2.0', 24, true],
  ['::ffff:0.0.0.0/96', '0.0.0.0', 0, true],
];
for (const [text, address, prefix, mapped] of cidrCases) {
  test(`parseCidr ${text}`, (t) => {
    const p = parseCidr(text);
    t.deepEqual([formatIp(p.address), p.prefix, p.address.mapped], [address, prefix, mapped]);
  });
}

const badCidrs: [text: string, message: string][] = [
  ['10.0.0.1/8', '"10.0.0.1/8" has host bits set beyond /8'],
  ['10.0.0.0/33', '"10.0.0.0/33" has an invalid prefix length (0–32)'],
  ['10.0.0.0/', '"10.0.0.0/" has an invalid prefix length (0–32)'],
  ['10.0.0.0/-1', '"10.0.0.0/-1" has an invalid prefix length (0–32)'],
  ['2001:db8::/129', '"2001:db8::/129" has an invalid prefix length (0–128)'],
  ['2001:db8::1/64', '"2001:db8::1/64" has host bits set beyond /64'],
  ['::ffff:10.0.0.0/95', '"::ffff:10.0.0.0/95": an IPv4-mapped prefix must be /96 or longer'],
  ['::ffff:10.0.0.1/120', '"::ffff:10.0.0.1/120" has host bits set beyond /24'],
];
for (const [text, message] of badCidrs) {
  test(`parseCidr rejects ${text}`, (t) => {
    t.throws(() => parseCidr(text), { message });
  });
}

test('ipv6() folds ::ffff:0:0/96 and nothing else', (t) => {
  t.deepEqual(words(ipv6(0, 0, 0xffff, 0x0a000001)), [4, 0x0a000001, 0, 0, 0, true]);
  t.deepEqual(words(ipv6(0, 0, 0xfffe, 0x0a000001)), [6, 0, 0, 0xfffe, 0x0a000001, false]);
  t.deepEqual(words(ipv6(0, 1, 0xffff, 0x0a000001)), [6, 0, 1, 0xffff, 0x0a000001, false]);
});

test('sameAddress compares family and bits, not the mapped flag', (t) => {
  t.true(sameAddress(parseIp('::ffff:10.0.0.1'), parseIp('10.0.0.1')));
  t.false(sameAddress(parseIp('::10.0.0.1'), parseIp('10.0.0.1')));
  t.false(sameAddress(ipv4(1), ipv4(2)));
});

test('addressFromBytes reads the bytes present and zero-fills the rest (ECS, RFC 7871 §6)', (t) => {
  t.is(formatIp(addressFromBytes(4, Uint8Array.from([10, 20]))), '10.20.0.0');
  t.is(formatIp(addressFromBytes(4, new Uint8Array(0))), '0.0.0.0');
  t.is(formatIp(addressFromBytes(6, Uint8Array.from([0x20, 0x01, 0x0d, 0xb8, 0x12]))), '2001:db8:1200::');
  const mapped = addressFromBytes(6, Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2]));
  t.deepEqual(words(mapped), [4, 0xc0000200, 0, 0, 0, true]);
});

test('addressFromBytes reads bytes[start..end) in place: nothing before start, nothing at or past end', (t) => {
  const frame = Uint8Array.from([0xff, 0xff, 10, 20, 30, 0xee, 0xee, 0xee, 0xee]);
  t.is(formatIp(addressFromBytes(4, frame, 2, 5)), '10.20.30.0');
  t.is(formatIp(addressFromBytes(4, frame, 2, 2)), '0.0.0.0');
  t.is(formatIp(addressFromBytes(4, frame, 2, 6)), '10.20.30.238');
  const v6 = Uint8Array.from([0xaa, 0x20, 0x01, 0x0d, 0xb8, 0, 1, 0x12, 0xbb, 0xbb]);
  t.is(formatIp(addressFromBytes(6, v6, 1, 8)), '2001:db8:1:1200::');
  const full = Uint8Array.from([9, ...addressToBytes(parseIp('2001:db8::1')), 9]);
  t.is(formatIp(addressFromBytes(6, full, 1, 17)), '2001:db8::1');
});

test('addressToBytes gives 4 bytes for IPv4, 16 for IPv6 and for mapped IPv4', (t) => {
  t.deepEqual([...addressToBytes(parseIp('192.0.2.1'))], [192, 0, 2, 1]);
  t.deepEqual([...addressToBytes(parseIp('::ffff:192.0.2.1'))], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 192, 0, 2, 1]);
  t.deepEqual([...addressToBytes(parseIp('2001:db8::1'))], [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
});

test('canonicalIpText: one spelling per address (RFC 5952), family kept, canonical text unchanged', (t) => {
  const cases: [text: string, canonical: string][] = [
    ['0:0:0:0:0:0:0:1', '::1'],
    ['0::1', '::1'],
    ['::0001', '::1'],
    ['::1', '::1'],
    ['2001:DB8::1', '2001:db8::1'],
    ['2001:0db8::0001', '2001:db8::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'], // equal zero runs: the first is compressed
    ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1'], // the longest run is compressed
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'], // a single zero group stays
    ['0:0:0:0:0:0:0:0', '::'],
    ['::FFFF:127.0.0.1', '::ffff:127.0.0.1'],
    ['0:0:0:0:0:ffff:7f00:1', '::ffff:127.0.0.1'], // mapped stays IPv6, dotted (RFC 5952 §5)
    ['192.0.2.1', '192.0.2.1'],
  ];
  for (const [text, canonical] of cases) {
    t.is(canonicalIpText(text), canonical, text);
    t.is(canonicalIpText(canonical), canonical, `${canonical} is a fixed point`);
  }
  t.throws(() => canonicalIpText('fe80::1%eth0'), { message: '"fe80::1%eth0" is not an IPv4 or IPv6 address' });
  t.throws(() => canonicalIpText('www.example.test'), { message: '"www.example.test" is not an IPv4 or IPv6 address' });
});

test('canonicalIfIpText: address literals take the canonical spelling; names and zone-indexed text stay as written', (t) => {
  t.deepEqual(['0:0:0:0:0:0:0:1', '2001:0DB8::0001', '192.0.2.1', '::FFFF:127.0.0.1', 'Mail.Example.test.', 'fe80::1%eth0', 'web'].map(canonicalIfIpText), [
    '::1',
    '2001:db8::1',
    '192.0.2.1',
    '::ffff:127.0.0.1',
    'Mail.Example.test.',
    'fe80::1%eth0',
    'web',
  ]);
});
