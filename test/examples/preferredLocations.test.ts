import test from 'ava';
import { fileURLToPath } from 'node:url';
import { loadConfigFile } from '../../src/process/loadConfig.js';
import { buildSnapshot } from '../../src/process/snapshot.js';
import { loadConfiguredLocationDb } from '../../src/capabilities/geo/loadSources.js';
import { ask, dcsDown, fixedContext } from '../support/selectionFixture.js';

/** examples/preferred-locations.yaml loads with its custom location entries and answers as its comments say (seed 002: docs/PRODUCT.md §4). */

const FILE = fileURLToPath(new URL('../../examples/preferred-locations.yaml', import.meta.url));
const { config } = loadConfigFile(FILE);
const { db: geo } = loadConfiguredLocationDb(config.geo, FILE);
const snapshot = (...down: string[]) =>
  buildSnapshot(FILE, config, { geo, health: dcsDown(...down), metrics: { sample: () => undefined } as never }, Date.now());

test('app: the seed 002 policy for Zambia, static proximity elsewhere, the internal view', (t) => {
  const rows = (down: string[]) =>
    ['41.72.0.0/24', '81.2.69.0/24', '202.12.27.0/24', '10.1.2.0/24', '192.0.2.1'].map((c) => {
      const a = ask(snapshot(...down), fixedContext(), 'app.example.test', c);
      return `${c} ${a.data.join(',')} /${a.scope}`;
    });
  t.deepEqual(rows([]), [
    '41.72.0.0/24 192.0.2.3 /16',
    '81.2.69.0/24 192.0.2.4 /16',
    '202.12.27.0/24 192.0.2.2 /16',
    '10.1.2.0/24 192.0.2.4 /8',
    '192.0.2.1 192.0.2.1 /5', // location unknown: every up data center in turn (no default set)
  ]);
  t.deepEqual(rows(['hk', 'uk']).slice(0, 1), ['41.72.0.0/24 192.0.2.1 /16'], 'partial match of Asia.HK (in, jpn): rotation starts with in');
});

test('legacy: static rules, most-specific subnet first, then location, then the default', (t) => {
  const at = (client: string) => {
    const a = ask(snapshot(), fixedContext(), 'legacy.example.test', client);
    return `${a.data.join(',')} /${a.scope}`;
  };
  t.is(at('41.72.1.0/24'), '192.0.2.8 /16');
  t.is(at('41.1.0.0/24'), '192.0.2.7 /10'); // 41.0.0.0/10 holds no address of 41.72.0.0/16
  t.is(at('202.12.27.0/24'), '192.0.2.3 /16');
  // Only "in Asia or not" of the location matters to this record: its answer classes merge London
  // with everything else outside Asia, and 64.0.0.0/2 holds neither 41.0.0.0/8 nor Asian entries.
  t.is(at('81.2.69.0/24'), '192.0.2.4 /2');
});
