import test from 'ava';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { parseCidr, parseIp } from '../../core/net/ipAddress.js';
import { formatQualifiers, qualifiersFromData } from '../../core/location/location.js';
import { continentOfCountry } from '../../core/location/qualifierVocabulary.js';
import { unpackId, unpackPrefix } from '../../core/lpm/rangeTable.js';
import { resolveEntries, type RangeEntry } from '../../core/lpm/tiling.js';
import { geoSchema, geoSchemaFor, geoSourceSchemaFor } from './geoSchema.js';
import { loadConfiguredLocationDb } from './loadSources.js';
import type { LocationFormat } from './locationFormat.js';
import { LOCATION_FORMATS } from './locationFormats.js';

/**
 * The extension point of location formats: a format defined here (one object, as a format file
 * holds) and composed with the engine's list, without editing any other file, is validated by the
 * `geo` schema of that list and its ranges answer lookups.
 */

/** `format: prefix-list`: one IPv4 prefix per line, every one located in the source's `country`. */
const prefixListFormat: LocationFormat<{ country: z.ZodString }> = {
  name: 'prefix-list',
  options: { country: z.string().regex(/^[A-Z]{2}$/, 'an ISO 3166-1 alpha-2 code') },
  load(file, source, { table }) {
    const id = table.intern({ qualifiers: qualifiersFromData([continentOfCountry(source.country), source.country]) });
    const entries: RangeEntry[] = readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        const { address, prefix } = parseCidr(line.trim());
        const start = BigInt(address.w0);
        return { start, end: start + (1n << BigInt(32 - prefix)) - 1n, value: id };
      });
    return { kind: 'locations', v4: resolveEntries(4, entries), v6: resolveEntries(6, []) };
  },
};

const formats = [...LOCATION_FORMATS, prefixListFormat];
const dir = mkdtempSync(join(tmpdir(), 'gslbd-format-'));
const configFile = join(dir, 'gslbd.yaml');
writeFileSync(join(dir, 'nl.txt'), '192.0.2.0/25\n198.51.100.0/24\n');
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

test('a source of a composed format is validated with its own option', (t) => {
  const schema = geoSchemaFor(formats);
  const ok = schema.parse({ sources: [{ format: 'prefix-list', path: 'nl.txt', country: 'NL' }] });
  t.deepEqual(ok.sources, [{ format: 'prefix-list', path: 'nl.txt', country: 'NL' }]);
  const issues = (value: unknown) => schema.safeParse(value).error?.issues.map((i) => [i.path.join('.'), i.message]);
  t.deepEqual(issues({ sources: [{ format: 'prefix-list', path: 'nl.txt', country: 'nl' }] }), [['sources.0.country', 'an ISO 3166-1 alpha-2 code']]);
  // Required on its own format's sources only (the next test has a netscaler source without it).
  t.deepEqual(issues({ sources: [{ format: 'prefix-list', path: 'nl.txt' }] }), [['sources.0.country', 'a prefix-list source needs "country"']]);
  // The engine's list does not know the format.
  const unknown = geoSchema.safeParse({ sources: [{ format: 'prefix-list', path: 'nl.txt' }] });
  t.deepEqual(
    unknown.error?.issues.map((i) => i.path.join('.')),
    ['sources.0.format'],
  );
});

test("a composed format's ranges answer lookups, over a source of a built-in format", (t) => {
  writeFileSync(join(dir, 'world.csv'), '192.0.0.0,192.255.255.255,NA,US\n');
  const geo = geoSchemaFor(formats).parse({
    sources: [
      { format: 'netscaler', path: 'world.csv' },
      { format: 'prefix-list', path: 'nl.txt', country: 'NL' },
    ],
    implementation: 'typescript',
  });
  const { db } = loadConfiguredLocationDb(geo, configFile, formats);
  const look = (address: string): string => {
    const packed = db.lookup(parseIp(address));
    return `${formatQualifiers(db.location(unpackId(packed)).qualifiers)}/${unpackPrefix(packed)}`;
  };
  t.is(look('192.0.2.1'), 'EU.NL/25');
  t.is(look('198.51.100.200'), 'EU.NL/24');
  t.is(look('192.0.2.200'), 'NA.US/25');
  t.deepEqual(db.describe().sources, [join(dir, 'world.csv'), join(dir, 'nl.txt')]);
});

test("the engine's geo schema is the one composed from its list; lists that conflict are refused", (t) => {
  t.deepEqual(z.toJSONSchema(geoSchemaFor(LOCATION_FORMATS), { io: 'input' }), z.toJSONSchema(geoSchema, { io: 'input' }));
  t.throws(() => geoSourceSchemaFor([]), { message: 'a geo schema needs at least one location format' });
  t.throws(() => geoSourceSchemaFor([...LOCATION_FORMATS, LOCATION_FORMATS[0]!]), { message: 'location format "mmdb" is listed twice' });
  const clash: LocationFormat<{ ipVersion: z.ZodString }> = {
    name: 'clash',
    options: { ipVersion: z.string() },
    load: () => {
      throw new Error('never loaded');
    },
  };
  t.throws(() => geoSourceSchemaFor([...LOCATION_FORMATS, clash]), {
    message: 'location format "clash": source key "ipVersion" is already defined differently',
  });
});
