import test from 'ava';
import fc from 'fast-check';
import { runSteps } from '../pipeline/selection/steps.js';
import { JSON_CHUNK_CHARS, JSON_MEMBERS_PER_STEP, jsonTextSteps, type JsonLayout, type JsonText } from './jsonTextSteps.js';

/** The replies' text must stay byte for byte what `JSON.stringify(value, null, 2)` wrote (issue 17). */

/** The text of `json`, checked against its byte count. */
function joined(json: JsonText | undefined): string | undefined {
  if (json === undefined) return undefined;
  const text = json.chunks.join('');
  if (Buffer.byteLength(text) !== json.bytes) throw new Error(`${json.bytes} bytes counted, ${Buffer.byteLength(text)} written`);
  return text;
}

function steps(value: unknown, layout: JsonLayout = 'indented'): { text: string | undefined; yields: number; chunks: number } {
  const g = jsonTextSteps(value, layout);
  let yields = 0;
  for (;;) {
    const next = g.next();
    if (next.done) return { text: joined(next.value), yields, chunks: next.value?.chunks.length ?? 0 };
    yields++;
  }
}

const records = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ name: `r${i}.big.test`, type: 'A', service: `svc${i % 7}`, dcs: i % 3 === 0 ? [] : ['us-east', 'eu-west'] }));

test("a large value's text equals JSON.stringify's, with the rules for toJSON, undefined, functions and non-finite numbers", (t) => {
  const value = {
    status: 'degraded',
    reasons: [{ kind: 'failsafe', since: new Date(0), detail: records(3000).map((r, i) => ({ ...r, gone: undefined, f: () => i, at: new Date(i) })) }],
    nested: [[records(2000)], [], {}, [undefined, null, Number.NaN, -0, Infinity, 'line\nbreak "quoted" \u2028', () => 1, Symbol('s')]],
    empty: { a: undefined, b: () => 1 },
    big: Object.fromEntries(records(1500).map((r) => [r.name, r])),
    tail: 1,
  };
  const { text, yields, chunks } = steps(value);
  t.is(text, JSON.stringify(value, null, 2));
  t.true(yields >= (3000 * 9 + 2000 * 7 + 1500 * 7) / JSON_MEMBERS_PER_STEP, `${yields} yields`);
  // No chunk is the whole text: the chunks are about JSON_CHUNK_CHARS each.
  t.true(chunks >= text!.length / (2 * JSON_CHUNK_CHARS), `${chunks} chunks of ${text!.length} characters`);
  const compact = steps(value, 'compact');
  t.is(compact.text, JSON.stringify(value));
  t.is(compact.yields, yields);
});

test('small values are one JSON.stringify call, without a yield; the top-level values JSON.stringify writes no text for give undefined', (t) => {
  for (const value of [null, 1, 'x', [], {}, { a: [1, 2, { b: 'c' }] }, records(10), new Date(5)]) {
    t.deepEqual(steps(value), { text: JSON.stringify(value, null, 2), yields: 0, chunks: 1 });
  }
  t.deepEqual(steps(undefined), { text: undefined, yields: 0, chunks: 0 });
  t.deepEqual(
    steps(() => 1),
    { text: undefined, yields: 0, chunks: 0 },
  );
  t.deepEqual(steps({ unicode: 'é€😀' }), { text: JSON.stringify({ unicode: 'é€😀' }, null, 2), yields: 0, chunks: 1 });
});

test('any JSON value, large or small, is written as JSON.stringify writes it, indented and compact', (t) => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 4 }), fc.integer({ min: 1, max: 2000 }), (v, n) => {
      const value = { v, many: Array.from({ length: n }, () => v) };
      return (
        joined(runSteps(jsonTextSteps(value))) === JSON.stringify(value, null, 2) && joined(runSteps(jsonTextSteps(value, 'compact'))) === JSON.stringify(value)
      );
    }),
    { numRuns: 200 },
  );
  t.pass();
});
