import test from 'ava';
import { z } from 'zod';
import type { FrontDoor, FrontDoorHost, FrontDoorKind } from '../core/contracts/frontDoor.js';
import { parseIp } from '../core/net/ipAddress.js';
import { EngineMetrics } from '../core/telemetry/engineMetrics.js';
import { createLogger } from '../core/telemetry/logger.js';
import { createDoors } from '../doors/createDoors.js';
import { checkDoorReferences, doorFileReferences } from '../doors/doorReferences.js';
import { doorRootShape, listenersSchema } from '../doors/listenersSchema.js';
import { Engine } from '../pipeline/engine.js';
import { fixedContext, snapshotOf } from '../../test/support/selectionFixture.js';
import { LISTENERS } from './frontDoors.js';

const ZONE = `
zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
`;

/** What the dummy doors did, in order, each line starting with the door's greeting. */
const events: string[] = [];

/** The part of the test's configuration the dummy door reads: its listener and the zone names its `zone` refers to. */
interface DummyConfig {
  readonly listeners: { readonly dummy?: { greeting: string; port: number; zone?: string | undefined; greetingFile?: string | undefined } | undefined };
  readonly zones?: readonly { readonly name: string }[];
}

/**
 * A front door that is not DNS, defined here and nowhere else: its listener key, a check of a
 * setting against the rest of the configuration, a file it reads, an admin route, and a door that
 * asks the engine one question when it starts (as an HTTP redirect door would, per request).
 */
const dummyDoor = {
  name: 'dummy',
  listener: z
    .strictObject({ greeting: z.string().min(1), port: z.number().int().default(8080), zone: z.string().optional(), greetingFile: z.string().optional() })
    .optional(),
  check(config: DummyConfig, ctx: z.RefinementCtx) {
    const zone = config.listeners.dummy?.zone;
    if (zone !== undefined && !(config.zones ?? []).some((z) => z.name === zone)) {
      ctx.addIssue({ code: 'custom', path: ['listeners', 'dummy', 'zone'], message: `no zone "${zone}"` });
    }
  },
  files: (config: DummyConfig) => {
    const file = config.listeners.dummy?.greetingFile;
    return file === undefined ? [] : [{ key: 'listeners.dummy.greetingFile', path: file }];
  },
  create(config: DummyConfig, host: FrontDoorHost): FrontDoor | undefined {
    const cfg = config.listeners.dummy;
    if (!cfg) return undefined;
    events.push(`${cfg.greeting}: created`);
    return {
      async start() {
        const a = await host.engine.resolve({
          name: 'ns1.example.test',
          type: 1,
          client: { address: parseIp('192.0.2.99'), sourcePrefix: 32, fromEcs: false },
          transport: 'tcp',
        });
        events.push(`${cfg.greeting}: started, asked the engine: ${a.answers.map((r) => r.data as string).join()}`);
      },
      async stop() {
        events.push(`${cfg.greeting}: stopped`);
      },
      describe: () => ({ dummy: `port ${cfg.port}` }),
      routes: [{ method: 'GET', path: '/explain/dummy', mutating: false, handle: () => ({ status: 200, json: { greeting: cfg.greeting } }) }],
    };
  },
} as const satisfies FrontDoorKind<DummyConfig>;

const WITH_DUMMY = [...LISTENERS, dummyDoor] as const;
const rootSchema = z
  .strictObject({
    listeners: listenersSchema(WITH_DUMMY).default({ dns: [] }),
    ...doorRootShape(WITH_DUMMY),
    zones: z.array(z.strictObject({ name: z.string() })).default([]),
  })
  .superRefine((config, ctx) => checkDoorReferences(WITH_DUMMY, config, ctx));

function host(): FrontDoorHost & { engine: Engine } {
  const engine = new Engine(snapshotOf(ZONE), fixedContext(), createLogger('silent'));
  return { file: 'gslbd.yaml', engine, metrics: new EngineMetrics(), log: engine.log, afterAnswer: [] };
}

test('the listeners section keeps its keys in list order: dns, admin, redirect, powerdns, compact', (t) => {
  t.deepEqual(Object.keys(listenersSchema(LISTENERS).shape), ['dns', 'admin', 'redirect', 'powerdns', 'compact']);
  t.deepEqual(Object.keys(doorRootShape(LISTENERS)), ['dns']);
});

test('a door kind added to the list gets its listener key validated, with path-named errors', (t) => {
  t.like(rootSchema.parse({ listeners: { dummy: { greeting: 'hello' } } }).listeners, { dns: [], dummy: { greeting: 'hello', port: 8080 } });
  const bad = rootSchema.safeParse({ listeners: { dummy: { greeting: '', colour: 'red' } } });
  t.false(bad.success);
  t.deepEqual(
    bad.error!.issues.map((i) => [i.path.join('.'), i.code]).sort((a, b) => a.join().localeCompare(b.join())),
    [
      ['listeners.dummy', 'unrecognized_keys'],
      ['listeners.dummy.greeting', 'too_small'],
    ],
  );
  t.false(listenersSchema(LISTENERS).safeParse({ dummy: { greeting: 'hello' } }).success, 'without the list line the key is unknown');
});

test('a door kind added to the list is created, started and stopped; doors not configured are not created', async (t) => {
  const config = rootSchema.parse({ listeners: { dummy: { greeting: 'hello' } } });
  const doors = createDoors(WITH_DUMMY, config, host());
  // The standalone listener is always created (with no address it binds nothing: `dns: []`).
  t.deepEqual([...doors.keys()], ['dns', 'dummy']);
  t.deepEqual(doors.get('dns')!.describe(), { dns: [] });
  for (const door of doors.values()) await door.start();
  t.deepEqual(doors.get('dummy')!.describe(), { dummy: 'port 8080' });
  for (const door of doors.values()) await door.stop();
  t.deepEqual(
    events.filter((e) => e.startsWith('hello:')),
    ['hello: created', 'hello: started, asked the engine: 192.0.2.53', 'hello: stopped'],
  );
});

test('a door kind added to the list checks its settings against the rest of the configuration, and names the files it reads', (t) => {
  t.true(rootSchema.safeParse({ listeners: { dummy: { greeting: 'hello', zone: 'example.test' } }, zones: [{ name: 'example.test' }] }).success);
  const bad = rootSchema.safeParse({ listeners: { dummy: { greeting: 'hello', zone: 'other.test' } }, zones: [{ name: 'example.test' }] });
  t.false(bad.success);
  t.deepEqual(
    bad.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`),
    ['listeners.dummy.zone: no zone "other.test"'],
  );
  const config = rootSchema.parse({ listeners: { dummy: { greeting: 'hello', greetingFile: 'greeting.txt' } } });
  t.deepEqual(doorFileReferences(WITH_DUMMY, config), [{ key: 'listeners.dummy.greetingFile', path: 'greeting.txt' }]);
  t.deepEqual(doorFileReferences(LISTENERS, config), [], 'the built-in doors name no file for this configuration');
});

test('a door offers its admin routes', async (t) => {
  const door = createDoors(WITH_DUMMY, rootSchema.parse({ listeners: { dummy: { greeting: 'routes' } } }), host()).get('dummy')!;
  const route = door.routes![0]!;
  t.like(route, { method: 'GET', path: '/explain/dummy', mutating: false });
  t.like(await route.handle({ url: new URL('http://admin.invalid/explain/dummy'), body: undefined }), { status: 200, json: { greeting: 'routes' } });
});

test('the list creates the built-in doors the configuration asks for, in list order', async (t) => {
  const config = rootSchema.parse({ listeners: { dns: [{ address: '127.0.0.1', port: 0 }], dummy: { greeting: 'hi' } } });
  const doors = createDoors(WITH_DUMMY, config, host());
  t.deepEqual([...doors.keys()], ['dns', 'dummy']);
  const dns = doors.get('dns')!;
  await dns.start();
  t.teardown(() => dns.stop());
  t.regex((dns.describe().dns as string[])[0]!, /^127\.0\.0\.1:\d+$/);
});

test('two sections with one name are refused', (t) => {
  t.throws(() => listenersSchema([...LISTENERS, { ...dummyDoor, name: 'compact' }]), { message: 'two listeners are named "compact"' });
});
