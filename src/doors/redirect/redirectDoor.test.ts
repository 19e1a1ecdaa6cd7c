import test from 'ava';
import { closeSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../core/config/load.js';
import { parseIp } from '../../core/net/ipAddress.js';
import type { Answer } from '../../core/model/query.js';
import { EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import { createLogger } from '../../core/telemetry/logger.js';
import { Engine } from '../../pipeline/engine.js';
import { fileReferenceProblems } from '../../process/fileReferences.js';
import { parseConfigText } from '../../process/loadConfig.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';
import { fixedContext, snapshotOf } from '../../../test/support/selectionFixture.js';
import { redirectDoor } from './redirectDoor.js';
import { decideRedirect, recordTypeFor, redirectQuery } from './redirectDecision.js';

const TOPOLOGY = `
${EXAMPLE_ZONE}
datacenters: [{ name: ams }, { name: nyc }, { name: tyo }]
services:
  - name: web
    endpoints: [{ dc: ams, address: 192.0.2.1 }, { dc: nyc, address: 192.0.2.2 }, { dc: tyo, address: "2001:db8::3" }, { dc: tyo, address: 192.0.2.3, enabled: false }]
  - name: mail
    endpoints: [{ dc: ams, target: mx1.example.net }]
records:
  - { name: www.example.test, type: A, ttl: 30, service: web }
  - { name: v6.example.test, type: AAAA, ttl: 30, service: web }
  - { name: mx.example.test, type: MX, service: mail }
`;

const listener = (hosts: string, extra = ''): string => `
listeners:
  redirect:
    address: 127.0.0.1
${extra}
    hosts:
${hosts}
${TOPOLOGY}`;

const URLS = '{ ams: "https://ams.example.net/", nyc: "https://nyc.example.net/shop/" }';

/** Every problem of a configuration text, as `path: message`. */
function problems(text: string): string[] {
  try {
    parseConfigText(text);
    return [];
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.problems.map((p) => `${p.path}: ${p.message}`);
  }
}

test('a valid redirect listener: defaults, base URLs normalised, proxies canonical', (t) => {
  const c = parseConfigText(
    listener(`      - { host: WWW.Example.Test., record: www.example.test, urls: ${URLS} }`, '    trustedProxies: ["::ffff:10.0.0.0/104", 192.0.2.0/24]'),
  );
  t.deepEqual(c.listeners.redirect, {
    address: '127.0.0.1',
    status: 302,
    trustedProxies: ['10.0.0.0/8', '192.0.2.0/24'],
    hosts: [{ host: 'www.example.test', record: 'www.example.test', urls: { ams: 'https://ams.example.net', nyc: 'https://nyc.example.net/shop' } }],
    maxConnections: 1024,
    maxRequestsPerConnection: 100,
    requestTimeoutMs: 10_000,
    idleTimeoutMs: 5000,
    maxHeaderBytes: 8192,
    logSampleRate: 0,
  });
});

test('load errors name the path: records, data centers, a data center without a URL, loops, bad URLs', (t) => {
  t.deepEqual(problems(listener(`      - { host: www.example.test, record: nothing.example.test, urls: ${URLS} }`)), [
    'listeners.redirect.hosts[0].record: no GSLB record of type A or AAAA is named "nothing.example.test"',
  ]);
  t.deepEqual(problems(listener(`      - { host: www.example.test, record: mx.example.test, urls: ${URLS} }`)), [
    'listeners.redirect.hosts[0].record: no GSLB record of type A or AAAA is named "mx.example.test"',
  ]);
  t.deepEqual(
    problems(
      listener(
        `      - { host: www.example.test, record: www.example.test, urls: { ams: "https://a.example.net", nyc: "https://n.example.net", lhr: "https://l.example.net" } }`,
      ),
    ),
    ['listeners.redirect.hosts[0].urls.lhr: no data center "lhr"'],
  );
  t.deepEqual(problems(listener(`      - { host: www.example.test, record: www.example.test, urls: { ams: "https://a.example.net" } }`)), [
    'listeners.redirect.hosts[0].urls: no URL for data center "nyc", which record www.example.test A can answer with',
  ]);
  t.deepEqual(
    problems(listener(`      - { host: v6.example.test, record: v6.example.test, urls: ${URLS} }`)),
    ['listeners.redirect.hosts[0].urls: no URL for data center "tyo", which record v6.example.test AAAA can answer with'],
    'the AAAA record answers with tyo (its disabled IPv4 endpoint does not count for the A record)',
  );
  t.deepEqual(
    problems(
      listener(`      - { host: www.example.test, record: www.example.test, urls: ${URLS} }
      - { host: shop.example.test, record: www.example.test, urls: { ams: "https://ams.example.net", nyc: "http://WWW.EXAMPLE.TEST.:8080/x" } }
      - { host: www.example.test, record: www.example.test, urls: ${URLS} }`),
    ),
    [
      'listeners.redirect.hosts[2].host: "www.example.test" is listed twice',
      'listeners.redirect.hosts[1].urls.nyc: "http://www.example.test.:8080/x" points at "www.example.test", a redirect host itself: clients would loop',
    ],
  );
  t.deepEqual(
    problems(
      listener(`      - { host: www.example.test, record: www.example.test, urls: { ams: "ftp://a.example.net", nyc: "https://u:p@n.example.net/?q#f" } }`),
    ).sort(),
    [
      'listeners.redirect.hosts[0].urls.ams: base URL "ftp://a.example.net": its scheme is ftp, not http or https',
      'listeners.redirect.hosts[0].urls.nyc: base URL "https://u:p@n.example.net/?q#f": it carries a user name or password',
      'listeners.redirect.hosts[0].urls.nyc: base URL "https://u:p@n.example.net/?q#f": it has a query or fragment (the request\'s path and query are appended to it)',
    ],
  );
  t.deepEqual(problems(listener(`      - { host: "*.example.test", record: www.example.test, urls: ${URLS} }`)), [
    'listeners.redirect.hosts[0].host: a redirect host is one name, not a wildcard',
  ]);
  t.deepEqual(problems(listener(`      - { host: www.example.test, record: www.example.test, urls: ${URLS} }`, '    status: 303')).length, 1);
  t.deepEqual(problems(listener(`      - { host: www.example.test, record: www.example.test, urls: ${URLS} }`, '    trustedProxies: [10.0.0.1/8]')), [
    'listeners.redirect.trustedProxies[0]: "10.0.0.1/8" has host bits set beyond /8',
  ]);
});

test('a reload that drops a record a redirect host needs is refused, with the path', (t) => {
  const text = listener(`      - { host: www.example.test, record: www.example.test, urls: ${URLS} }`);
  t.deepEqual(problems(text), []);
  t.deepEqual(problems(text.replace('  - { name: www.example.test, type: A, ttl: 30, service: web }\n', '')), [
    'listeners.redirect.hosts[0].record: no GSLB record of type A or AAAA is named "www.example.test"',
  ]);
});

test('check-config names missing TLS files', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-redirect-'));
  writeFileSync(join(dir, 'cert.pem'), 'x');
  const config = parseConfigText(
    listener(`      - { host: www.example.test, record: www.example.test, urls: ${URLS} }`, '    tls: { certFile: cert.pem, keyFile: key.pem }'),
  );
  t.deepEqual(fileReferenceProblems(config, join(dir, 'gslbd.yaml')), [{ path: 'listeners.redirect.tls.keyFile', message: 'cannot read "key.pem": ENOENT' }]);
});

test('the record type follows the client family, or the type the record has', (t) => {
  const records = {
    records: [
      { name: 'both', type: 'A' },
      { name: 'both', type: 'AAAA' },
      { name: 'v4', type: 'A' },
      { name: 'v6', type: 'AAAA' },
    ],
  } as never;
  t.deepEqual(
    ['both', 'v4', 'v6', 'none'].map((r) => [recordTypeFor(records, r, 4), recordTypeFor(records, r, 6)]),
    [
      [1, 28],
      [1, 1],
      [28, 28],
      [1, 28],
    ],
  );
  t.like(redirectQuery(records, { host: 'h', record: 'v6', urls: {} }, parseIp('::ffff:192.0.2.1')), {
    name: 'v6',
    type: 28,
    client: { sourcePrefix: 32, fromEcs: false },
    transport: 'tcp',
  });
});

const answer = (dcs: string[], ttls: number[]): Answer => ({
  rcode: 0,
  authoritative: true,
  answers: ttls.map((ttl, i) => ({ name: 'www.example.test', type: 'A', ttl, data: `192.0.2.${i + 1}` })),
  authority: [],
  additional: [],
  scope: 24,
  dcs,
});
const HOST = { host: 'www.example.test', record: 'www.example.test', urls: { ams: 'https://ams.example.net', nyc: 'https://nyc.example.net/shop' } };

test('the decision: the best data center with a URL; max-age the smallest TTL; 503 without a data center', (t) => {
  t.deepEqual(decideRedirect(HOST, answer(['nyc', 'ams'], [30, 10]), '/a?b', 307), {
    status: 307,
    location: 'https://nyc.example.net/shop/a?b',
    maxAge: 10,
    dc: 'nyc',
    reason: '',
  });
  t.like(decideRedirect(HOST, answer(['tyo', 'ams'], [30, 30]), '/', 302), { status: 302, location: 'https://ams.example.net/', dc: 'ams' });
  t.deepEqual(decideRedirect(HOST, answer([], [60]), '/', 302), {
    status: 503,
    location: undefined,
    maxAge: 60,
    dc: '',
    reason: 'the record answered no data center',
  });
  t.like(decideRedirect(HOST, answer([], []), '/', 302), { status: 503, maxAge: 5 }, 'NODATA: retry after 5 s');
  t.like(decideRedirect(HOST, answer(['tyo'], [30]), '/', 302), { status: 503, reason: 'no URL for data center tyo' });
});

test('a permanent status is accepted with a warning at start-up; 302 and 307 without', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-redirect-'));
  const logFile = join(dir, 'log.jsonl');
  const fd = openSync(logFile, 'w');
  t.teardown(() => closeSync(fd));
  const log = createLogger('warn', fd);
  for (const status of [301, 302, 307, 308]) {
    const config = parseConfigText(listener(`      - { host: www.example.test, record: www.example.test, urls: ${URLS} }`, `    status: ${status}`));
    const engine = new Engine(snapshotOf(TOPOLOGY), fixedContext(), log);
    t.truthy(redirectDoor.create(config, { file: join(dir, 'gslbd.yaml'), engine, metrics: new EngineMetrics(), log, afterAnswer: [] }));
  }
  const warnings = readFileSync(logFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { status: number; msg: string });
  t.deepEqual(
    warnings.map((w) => w.status),
    [301, 308],
  );
  t.regex(warnings[0]!.msg, /permanent redirect .* after a failover/);
});
