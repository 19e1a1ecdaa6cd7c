import test from 'ava';
import { z } from 'zod';
import type { FrontDoor, FrontDoorHost, FrontDoorKind } from '../core/contracts/frontDoor.js';
import { parseIp } from '../core/net/ipAddress.js';
import { EngineMetrics } from '../core/telemetry/engineMetrics.js';
import { createLogger } from '../core/telemetry/logger.js';
import { createDoors } from '../doors/createDoors.js';
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

/**
 * A front door that is not DNS, defined here and nowhere else: its listener key, and a door that
 * asks the engine one question when it starts (as an HTTP redirect door would, per request).
 */
const dummyDoor = {
  name: 'dummy',
  listener: z.strictObject({ greeting: z.string().min(1), port: z.number().int().default(8080) }).optional(),
  create(config: { readonly listeners: { readonly dummy?: { greeting: string; port: number } | undefined } }, host: FrontDoorHost): FrontDoor | undefined {
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
    };
  },
} as const satisfies FrontDoorKind<{ readonly listeners: { readonly dummy?: { greeting: string; port: number } | undefined } }>;

const WITH_DUMMY = [...LISTENERS, dummyDoor] as const;
const rootSchema = z.strictObject({ listeners: listenersSchema(WITH_DUMMY).default({ dns: [] }), ...doorRootShape(WITH_DUMMY) });

function host(): FrontDoorHost & { engine: Engine } {
  const engine = new Engine(snapshotOf(ZONE), fixedContext(), createLogger('silent'));
  return { file: 'gslbd.yaml', engine, metrics: new EngineMetrics(), log: engine.log, afterAnswer: [] };
}

test('the listeners section keeps its keys in list order: dns, admin, powerdns, compact', (t) => {
  t.deepEqual(Object.keys(listenersSchema(LISTENERS).shape), ['dns', 'admin', 'powerdns', 'compact']);
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
