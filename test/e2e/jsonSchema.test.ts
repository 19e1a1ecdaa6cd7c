import test from 'ava';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { agentConfigSchema } from '../../src/agent/agentSchema.js';
import { configJsonSchema, jsonSchemaOf } from '../../src/process/configSchema.js';
import { REPO_ROOT } from '../support/engineProcess.js';
import { engineExampleFiles } from '../support/exampleConfigs.js';

/**
 * The JSON Schema `gslbd schema` prints works in the tools editors and CI use: ajv compiles it in
 * strict mode (no unknown keyword, no ambiguous type), every configuration in `examples/`
 * validates against it, and every property carries a description (what editors show on hover).
 */

const examples = engineExampleFiles();

function compile() {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  return ajv.compile(configJsonSchema());
}

test('ajv compiles the schema in strict mode', (t) => {
  t.notThrows(compile);
});

test('every example configuration validates against the schema', (t) => {
  const validate = compile();
  t.true(examples.length >= 5);
  for (const f of examples) {
    const ok = validate(parse(readFileSync(join(REPO_ROOT, 'examples', f), 'utf8'), { merge: true }));
    t.true(ok, `${f}: ${JSON.stringify(validate.errors)}`);
  }
});

/**
 * Adds to `out` the properties under `node` (a JSON Schema) it checked, and the paths of those that have no non-empty `description`:
 * `a.b` for a property, `[]` for the items of an array, `*` for the values of a record, `$defs.X`
 * for a definition; the options of `anyOf`/`oneOf`/`allOf` and a `not` share their parent's path.
 */
function undescribedProperties(node: unknown, path: string, out: { checked: number; missing: string[] }): typeof out {
  if (typeof node !== 'object' || node === null) return out;
  const s = node as Record<string, unknown>;
  for (const [key, child] of Object.entries((s.properties ?? {}) as Record<string, unknown>)) {
    const at = path === '' ? key : `${path}.${key}`;
    const description = (child as { description?: unknown }).description;
    out.checked += 1;
    if (typeof description !== 'string' || description.trim() === '') out.missing.push(at);
    undescribedProperties(child, at, out);
  }
  const items = Array.isArray(s.prefixItems) ? [...(s.prefixItems as unknown[]), s.items] : [s.items];
  for (const item of items) undescribedProperties(item, `${path}[]`, out);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) for (const option of (s[key] ?? []) as unknown[]) undescribedProperties(option, path, out);
  undescribedProperties(s.not, path, out);
  undescribedProperties(s.additionalProperties, `${path}.*`, out);
  for (const [name, def] of Object.entries((s.$defs ?? {}) as Record<string, unknown>)) undescribedProperties(def, `$defs.${name}`, out);
  return out;
}

test('every property of the schema has a description', (t) => {
  const walked = undescribedProperties(configJsonSchema(), '', { checked: 0, missing: [] });
  t.true(walked.checked > 300, `the walk reaches the whole schema (${walked.checked} properties)`);
  const missing = [...new Set(walked.missing)];
  t.deepEqual(missing, [], `properties without a description:\n${missing.join('\n')}`);
});

test('a one-or-more field keeps its description: on the field, not on the list inside it', (t) => {
  const oneOrMore = z.preprocess((v) => (Array.isArray(v) ? v : [v]), z.array(z.string()).min(1)).meta({ oneOrMore: true });
  const schema = jsonSchemaOf(z.strictObject({ qname: oneOrMore.describe('Names answered.') })) as { properties: { qname: Record<string, unknown> } };
  t.deepEqual(schema.properties.qname, {
    description: 'Names answered.',
    anyOf: [{ type: 'string' }, { type: 'array', minItems: 1, items: { type: 'string' } }],
  });
});

test('the schema rejects what the engine rejects (so the test above can fail)', (t) => {
  const validate = compile();
  t.false(validate({ zones: [], bogus: 1 }));
  t.false(
    validate({
      zones: [{ name: 'example.test', soa: { mname: 'a.example.test', rname: 'b.example.test' }, ns: ['a.example.test'] }],
      records: [{ name: 'x', ttl: '1y' }],
    }),
  );
});

test('a zone needs soa and ns, or a zoneFile that supplies them', (t) => {
  const validate = compile();
  const soa = { mname: 'ns1.example.test', rname: 'hostmaster.example.test' };
  const valid = (zone: Record<string, unknown>): boolean => validate({ zones: [{ name: 'example.test', ...zone }] }) as boolean;
  t.true(valid({ zoneFile: 'example.test.zone' }), JSON.stringify(validate.errors));
  t.true(valid({ soa, ns: ['ns1.example.test'] }), JSON.stringify(validate.errors));
  t.true(valid({ soa, zoneFile: 'example.test.zone' }), 'a zone may set its soa and take the NS from its file');
  t.false(valid({}), 'neither');
  t.false(valid({ soa }), 'soa without ns or zoneFile');
  t.false(valid({ ns: ['ns1.example.test'] }), 'ns without soa or zoneFile');
  t.true(examples.includes('zone-file.yaml'), 'an example takes its SOA and NS from a zone file');
});

/** The agent's schema (`gslbd schema --agent`), compiled as an editor's or CI's validator would: strict, with the standard formats (its engine URLs are `uri`). */
function compileAgent() {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats.default(ajv);
  return ajv.compile(jsonSchemaOf(agentConfigSchema));
}

test('the agent configuration schema: strict ajv compiles it, every example agent file validates, every property is described', (t) => {
  const validate = compileAgent();
  const agentExamples = ['agent/agent.yaml', 'agent/prometheus.yaml'];
  for (const f of agentExamples) {
    const ok = validate(parse(readFileSync(join(REPO_ROOT, 'examples', f), 'utf8'), { merge: true }));
    t.true(ok, `${f}: ${JSON.stringify(validate.errors)}`);
  }
  const walked = undescribedProperties(jsonSchemaOf(agentConfigSchema), '', { checked: 0, missing: [] });
  t.true(walked.checked > 60, `the walk reaches the whole schema (${walked.checked} properties)`);
  t.deepEqual([...new Set(walked.missing)], [], 'properties without a description');
});

test('the agent configuration schema rejects what the agent rejects', (t) => {
  const validate = compileAgent();
  const engines = [{ url: 'http://127.0.0.1:8053', tokenFile: 'agent.token' }];
  t.true(validate({ agent: { name: 'a', dc: 'us' }, engines }), JSON.stringify(validate.errors));
  t.false(validate({ agent: { name: 'a', dc: 'us' }, engines, bogus: 1 }), 'an unknown key');
  t.false(validate({ agent: { name: 'a', dc: 'us' } }), 'no engines');
  t.false(validate({ agent: { name: 'a', dc: 'us' }, engines: [{ url: 'not a url', tokenFile: 'x' }] }), 'an engine URL that is no URI');
  t.false(validate({ agent: { name: 'a', dc: 'us' }, engines, probes: { methods: ['ping'] } }), 'an unknown probe method');
});
