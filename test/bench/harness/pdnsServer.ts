import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchContext } from './benchGroup.js';
import { exchange, queryPacket } from './dnsWire.js';
import { freePort } from '../../support/freePort.js';
import type { BenchProcess } from './processes.js';

/** One pdns_server variant: its backend settings, distributor threads and caches. */
export interface PdnsVariant {
  /** For process names and error messages. */
  readonly name: string;
  /** The `launch=` line and the backend's own settings, one per element. */
  readonly backend: readonly string[];
  /** `distributor-threads` (each one lock-step connection to a remote backend). */
  readonly threads: number;
  /** `off`: `cache-ttl=0 query-cache-ttl=0` (the example configuration); `default`: PowerDNS's 20/20/60. */
  readonly caches: 'off' | 'default';
}

/** A running pdns_server. */
export interface PdnsServer {
  /** UDP/TCP port on 127.0.0.1. */
  readonly port: number;
  readonly proc: BenchProcess;
}

/**
 * Starts pdns_server (Debian 4.7) in the foreground on a free loopback port with a generated
 * configuration in `confDir`, pinned to `cpu` (not pinned when undefined), and waits until it
 * answers `probeName A` with NOERROR.
 * Every variant has `receiver-threads=1`, `edns-subnet-processing=yes`, `consistent-backends=yes`
 * and no web server, API or security poll.
 * @throws Error with the end of its log when it exits or does not answer within about 10 s.
 */
export async function startPdns(
  ctx: BenchContext,
  variant: PdnsVariant,
  confDir: string,
  cpu: number | undefined,
  probeName = 'ns1.example.test',
): Promise<PdnsServer> {
  const port = await freePort();
  const settings: string[] = [
    ...variant.backend,
    'local-address=127.0.0.1',
    `local-port=${port}`,
    `socket-dir=${confDir}`,
    'daemon=no',
    'guardian=no',
    'disable-syslog=yes',
    'loglevel=4',
    'log-dns-queries=no',
    'edns-subnet-processing=yes',
    'security-poll-suffix=',
    'webserver=no',
    'api=no',
    'receiver-threads=1',
    `distributor-threads=${variant.threads}`,
    'consistent-backends=yes',
    ...(variant.caches === 'off' ? ['cache-ttl=0', 'query-cache-ttl=0'] : []),
  ];
  writeFileSync(join(confDir, 'pdns.conf'), `${settings.join('\n')}\n`);
  const proc = ctx.processes.start(`pdns ${variant.name}`, '/usr/sbin/pdns_server', [`--config-dir=${confDir}`], { cpu, logFile: join(confDir, 'pdns.log') });
  let exited = false;
  void proc.exited.then(() => (exited = true));
  const probe = queryPacket(1, probeName, 'A');
  for (let i = 0; ; i++) {
    if (exited) throw new Error(`pdns_server ${variant.name} exited:\n${proc.tail()}`);
    try {
      const a = await exchange(port, probe, 300);
      if (a.rcode === 'NOERROR') return { port, proc };
    } catch {
      // not up yet
    }
    if (i > 60) throw new Error(`pdns_server ${variant.name} not answering:\n${proc.tail()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * PowerDNS's geoip backend on the quickstart zone (writes `geoip.yaml` into `dataDir` and returns
 * the backend settings): the same static records, and `www` as a service keyed by the client's
 * continent (`%cn`) over Debian's `geoip-database` (legacy GeoIP.dat/GeoIPv6.dat, 2019 country
 * data) — the quickstart's three addresses, chosen by continent instead of static proximity over
 * city data, so answers differ from gslbd's client by client.
 */
export function geoipBackend(dataDir: string): string[] {
  const dc = { na: '192.0.2.10', sa: '192.0.2.10', eu: '198.51.100.10', af: '198.51.100.10', as: '203.0.113.10', oc: '203.0.113.10', unknown: '192.0.2.10' };
  const lines = [
    'domains:',
    '- domain: example.test',
    '  ttl: 300',
    '  records:',
    '    example.test:',
    '      - soa: ns1.example.test hostmaster.example.test 2024010101 3600 600 604800 60',
    '      - ns: ns1.example.test',
    '    ns1.example.test:',
    '      - a: 192.0.2.53',
    '    v6.example.test:',
    '      - aaaa: 2001:db8::10',
    ...Object.entries(dc).flatMap(([cn, address]) => [`    ${cn}.www.example.test:`, '      - a:', `          content: ${address}`, '          ttl: 30']),
    '  services:',
    "    www.example.test: [ '%cn.www.example.test', 'unknown.www.example.test' ]",
    '',
  ];
  const zones = join(dataDir, 'geoip.yaml');
  writeFileSync(zones, lines.join('\n'));
  return ['launch=geoip', 'geoip-database-files=/usr/share/GeoIP/GeoIP.dat /usr/share/GeoIP/GeoIPv6.dat', `geoip-zones-file=${zones}`];
}
