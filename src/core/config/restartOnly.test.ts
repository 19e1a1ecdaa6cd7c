import test from 'ava';
import { z } from 'zod';
import { changedRestartSettings, restartOnly, restartSettings } from './restartOnly.js';

const port = z.number().int();
const schema = z
  .strictObject({
    listeners: z.array(z.strictObject({ address: restartOnly(z.string(), 'socket'), port: restartOnly(port, 'socket').default(53), label: z.string() })),
    named: z.record(z.string(), z.strictObject({ file: restartOnly(z.string(), 'read at start').optional() })),
    logging: z.strictObject({ format: restartOnly(z.enum(['a', 'b']), 'logger').default('a'), level: z.string() }).optional(),
    other: z.strictObject({ port }),
    either: z.union([z.strictObject({ store: restartOnly(z.string(), 'store') }), z.strictObject({ store: restartOnly(z.number(), 'store') })]),
  })
  .superRefine(() => undefined);

test('restartSettings walks objects, arrays, records, wrappers and unions; marking a shared schema marks a copy', (t) => {
  t.deepEqual(
    restartSettings(schema).map((s) => s.path.join('.')),
    ['listeners.[].address', 'listeners.[].port', 'named.*.file', 'logging.format', 'either.store', 'either.store'],
  );
});

test('changedRestartSettings: every changed restart-only setting once, none for reloadable fields', (t) => {
  const settings = restartSettings(schema);
  const before = {
    listeners: [{ address: '::1', port: 53, label: 'x' }],
    named: { a: { file: 'f' } },
    logging: { format: 'a', level: 'info' },
    other: { port: 1 },
    either: { store: 's' },
  };
  t.deepEqual(changedRestartSettings(settings, before, structuredClone(before)), []);
  const reloadable = { ...before, listeners: [{ address: '::1', port: 53, label: 'y' }], logging: { format: 'a', level: 'debug' }, other: { port: 2 } };
  t.deepEqual(changedRestartSettings(settings, before, reloadable), []);
  const after = {
    ...before,
    listeners: [{ address: '::1', port: 54, label: 'x' }],
    named: { a: { file: 'g' } },
    logging: { format: 'b', level: 'info' },
    either: { store: 1 },
  };
  t.deepEqual(
    changedRestartSettings(settings, before, after).map((s) => `${s.path.join('.')}: ${s.why}`),
    ['listeners.[].port: socket', 'named.*.file: read at start', 'logging.format: logger', 'either.store: store'],
  );
  // A listener added or removed changes the list.
  t.deepEqual(
    changedRestartSettings(settings, before, { ...before, listeners: [] }).map((s) => s.path.join('.')),
    ['listeners.[].address', 'listeners.[].port'],
  );
});
