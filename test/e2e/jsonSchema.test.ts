import test from 'ava';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { configJsonSchema } from '../../src/process/configSchema.js';
import { REPO_ROOT } from '../support/engineProcess.js';
import { engineExampleFiles } from '../support/exampleConfigs.js';

/**
 * The JSON Schema `gslbd schema` prints works in the tools editors and CI use: ajv compiles it in
 * strict mode (no unknown keyword, no ambiguous type), and every configuration in `examples/`
 * validates against it.
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
