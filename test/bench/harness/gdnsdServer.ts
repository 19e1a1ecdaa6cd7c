import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TYPE_CODES } from '../../../src/core/dns/records.js';
import type { Snapshot } from '../../../src/pipeline/snapshot.js';
import { familyBits, formatIp, ipv4, ipv6, type IpAddress } from '../../../src/core/net/ipAddress.js';
import type { RangeLocationDb } from '../../../src/capabilities/geo/rangeLocationDb.js';
import { systemContext } from '../../../src/core/views/resolveContext.js';
import { resolve } from '../../../src/pipeline/zones/authoritative.js';
import { exchange, queryPacket } from './dnsWire.js';
import { freePort } from '../../support/freePort.js';
import type { BenchProcess, ProcessSupervisor } from './processes.js';

/** A gdnsd process serving the quickstart zone. */
export interface GdnsdServer {
  readonly process: BenchProcess;
  readonly port: number;
  /** Networks in the geoip `nets` file (the quickstart decisions, merged per data center). */
  readonly nets: number;
  /** Locations whose static-proximity decision is a tie split by rotation in gslbd (gdnsd gets the first answer). */
  readonly tiedLocations: number;
}

/** The quickstart's data centers and their `www` addresses; us-east is also the default for unknown clients. */
const DCS: Readonly<Record<string, string>> = { 'us-east': '192.0.2.10', 'eu-west': '198.51.100.10', 'ap-northeast': '203.0.113.10' };
const DEFAULT_DC = 'us-east';

/**
 * Starts gdnsd (Debian `gdnsd`, the native ceiling) on a free loopback port with the quickstart
 * zone: the same static records, and `www` as a geoip DYNA resource. gdnsd's GeoIP2 maps expect
 * MaxMind's record layout, which the ip-location-db files do not have, so the map uses `nets`
 * only: every network of the location data, labelled with the data center gslbd's static
 * proximity picks for its location and merged per data center (networks of the default data
 * center are left to the map's default). gdnsd then answers the same addresses for the same ECS
 * clients with a longest-prefix lookup of its own, and computes its own ECS scopes. `cpu`: the
 * CPU gdnsd is pinned to (undefined: not pinned); `udpThreads`: its UDP threads (`udp_threads`,
 * each with its own SO_REUSEPORT socket).
 * @throws Error with gdnsd's log when it does not start within 120 s.
 */
export async function startGdnsd(
  processes: ProcessSupervisor,
  snapshot: Snapshot,
  geo: RangeLocationDb,
  dir: string,
  cpu: number | undefined,
  signal: AbortSignal,
  udpThreads = 1,
): Promise<GdnsdServer> {
  const port = await freePort();
  mkdirSync(join(dir, 'zones'), { recursive: true });
  mkdirSync(join(dir, 'geoip'), { recursive: true });
  const { lines, tiedLocations } = await netsFromDecisions(snapshot, geo, signal);
  writeFileSync(join(dir, 'geoip', 'nets'), `${lines.join('\n')}\n`);
  writeFileSync(
    join(dir, 'config'),
    `options => {
  listen => [ 127.0.0.1:${port} ]
  udp_threads => ${udpThreads}
  tcp_threads => 1
  run_dir => ${join(dir, 'run')}
  state_dir => ${join(dir, 'state')}
}
plugins => {
  geoip => {
    maps => {
      quickstart => {
        datacenters => [ ${Object.keys(DCS).join(', ')} ]
        nets => nets
      }
    }
    resources => {
      www => {
        map => quickstart
        dcmap => { ${Object.entries(DCS)
          .map(([dc, a]) => `${dc} => ${a}`)
          .join(', ')} }
      }
    }
  }
}
`,
  );
  writeFileSync(
    join(dir, 'zones', 'example.test'),
    `$TTL 300
@     SOA  ns1 hostmaster 1 3600 600 604800 300
@     NS   ns1
ns1   A    192.0.2.53
v6    AAAA 2001:db8::10
www   30   DYNA geoip!www
`,
  );
  const proc = processes.start('gdnsd', 'gdnsd', ['-c', dir, 'start'], { cpu, logFile: join(dir, 'gdnsd.log') });
  let exited = false;
  void proc.exited.then(() => (exited = true));
  const probe = queryPacket(1, 'v6.example.test', 'AAAA');
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (exited) throw new Error(`gdnsd exited during start-up:\n${proc.tail()}`);
    if (signal.aborted) throw signal.reason;
    if (Date.now() > deadline) throw new Error(`gdnsd not ready after 120 s:\n${proc.tail()}`);
    try {
      await exchange(port, probe, 500);
      break;
    } catch {
      // Still loading.
    }
  }
  return { process: proc, port, nets: lines.length, tiedLocations };
}

/**
 * gdnsd `nets` lines (`network/len => dc`) reproducing gslbd's `www` decisions: each merged range
 * of the location data gets the data center resolve() picks for an address in it (decided once
 * per location), neighbouring ranges with the same data center merge, and every run not answered
 * by the default data center is written as the CIDR blocks that cover it exactly. Yields to the
 * event loop now and then, so SIGINT and `signal` are handled during the seconds this takes.
 */
async function netsFromDecisions(snapshot: Snapshot, geo: RangeLocationDb, signal: AbortSignal): Promise<{ lines: string[]; tiedLocations: number }> {
  const ctx = systemContext();
  const dcOfLocation = new Map<number, string>();
  let tiedLocations = 0;
  const decide = (address: IpAddress, id: number): string => {
    let dc = dcOfLocation.get(id);
    if (dc === undefined) {
      const client = { address, sourcePrefix: familyBits(address.family), fromEcs: true };
      const answers = [0, 1, 2].map(
        () => resolve({ name: 'www.example.test', type: TYPE_CODES.A, client, transport: 'udp' }, snapshot, ctx).dcs[0] ?? DEFAULT_DC,
      );
      if (new Set(answers).size > 1) tiedLocations++;
      dc = answers[0]!;
      dcOfLocation.set(id, dc);
    }
    return dc;
  };
  const lines: string[] = [];
  const emit = (start: bigint, end: bigint, bits: 32 | 128, dc: string): void => {
    if (dc === DEFAULT_DC) return;
    for (const [net, len] of cidrBlocks(start, end, bits)) lines.push(`${formatBig(net, bits)}/${len} => ${dc}`);
  };

  const v4 = geo.v4;
  await walkRuns(
    signal,
    v4.ids.length,
    (i) => decide(ipv4(v4.starts[i]!), v4.ids[i]!),
    (i) => BigInt(v4.starts[i]!),
    2n ** 32n,
    32,
    emit,
  );
  const v6 = geo.v6;
  const word = (i: number, k: number): number => v6.starts[i * 4 + k]!;
  await walkRuns(
    signal,
    v6.ids.length,
    (i) => decide(ipv6(word(i, 0), word(i, 1), word(i, 2), word(i, 3)), v6.ids[i]!),
    (i) => (BigInt(word(i, 0)) << 96n) | (BigInt(word(i, 1)) << 64n) | (BigInt(word(i, 2)) << 32n) | BigInt(word(i, 3)),
    2n ** 128n,
    128,
    emit,
  );
  return { lines, tiedLocations };
}

/** Walks ranges `0..n-1` and calls `emit` once per run of neighbouring ranges with the same data center. */
async function walkRuns(
  signal: AbortSignal,
  n: number,
  dcOf: (i: number) => string,
  startOf: (i: number) => bigint,
  spaceEnd: bigint,
  bits: 32 | 128,
  emit: (start: bigint, end: bigint, bits: 32 | 128, dc: string) => void,
): Promise<void> {
  let runStart = 0;
  let runDc = dcOf(0);
  for (let i = 1; i <= n; i++) {
    if ((i & 0xfff) === 0) {
      await new Promise((r) => setImmediate(r));
      if (signal.aborted) throw signal.reason;
    }
    const dc = i < n ? dcOf(i) : '';
    if (dc === runDc) continue;
    emit(startOf(runStart), (i < n ? startOf(i) : spaceEnd) - 1n, bits, runDc);
    runStart = i;
    runDc = dc;
  }
}

/** The fewest CIDR blocks covering `[start, end]` exactly, as `[network, prefix length]`. */
export function cidrBlocks(start: bigint, end: bigint, bits: number): [bigint, number][] {
  const out: [bigint, number][] = [];
  while (start <= end) {
    let size = 0;
    while (size < bits && ((start >> BigInt(size)) & 1n) === 0n && start + (1n << BigInt(size + 1)) - 1n <= end) size++;
    out.push([start, bits - size]);
    start += 1n << BigInt(size);
  }
  return out;
}

function formatBig(v: bigint, bits: 32 | 128): string {
  if (bits === 32) return formatIp(ipv4(Number(v)));
  const w = (k: number): number => Number((v >> BigInt(96 - 32 * k)) & 0xffffffffn);
  return formatIp(ipv6(w(0), w(1), w(2), w(3)));
}
