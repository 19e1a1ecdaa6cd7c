import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEngine, stopAllEngines } from '../support/engineProcess.js';
import { EXAMPLE_ZONE } from '../support/exampleZone.js';
import { waitFor } from '../support/waitFor.js';

/**
 * systemd `Type=notify` readiness: the engine sends `READY=1` (with its PID and a status line) to
 * the AF_UNIX datagram socket named by `$NOTIFY_SOCKET` once it is up, and `STOPPING=1` when it
 * stops. The socket is the test's own (python3 binds it: Node's dgram cannot), as systemd's would be.
 */

const dir = mkdtempSync(join(tmpdir(), 'gslbd-notify-'));
test.after.always(async () => {
  await stopAllEngines();
  rmSync(dir, { recursive: true, force: true });
});

/** Listens on a Unix datagram socket; returns the messages received so far. */
async function notifySocket(path: string): Promise<{ messages: string[]; close(): void }> {
  const py = spawn(
    'python3',
    [
      '-c',
      'import json, socket, sys\ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\ns.bind(sys.argv[1])\nprint("bound", flush=True)\nwhile True:\n    print(json.dumps(s.recv(4096).decode()), flush=True)',
      path,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const messages: string[] = [];
  let bound = false;
  py.stdout.setEncoding('utf8');
  let partial = '';
  py.stdout.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const l of lines) {
      if (l === 'bound') bound = true;
      else messages.push(JSON.parse(l) as string);
    }
  });
  await waitFor('python3 to bind the notify socket', () => bound, 20000);
  return { messages, close: () => py.kill() };
}

test('READY=1 with the main PID once the engine is up, STOPPING=1 when it stops', async (t) => {
  const path = join(dir, 'notify.sock');
  const socket = await notifySocket(path);
  t.teardown(() => socket.close());
  const engine = await startEngine(
    `listeners:
  dns: [{ address: 127.0.0.1, port: 0 }]
${EXAMPLE_ZONE}
`,
    { env: { NOTIFY_SOCKET: path } },
  );
  await waitFor('READY=1', () => socket.messages.length > 0, 10000);
  const ready = socket.messages[0]!.split('\n');
  t.true(ready.includes('READY=1'));
  t.true(ready.includes(`MAINPID=${engine.pid}`));
  t.true(ready.some((l) => /^STATUS=serving generation 1$/.test(l)));
  await engine.stop();
  await waitFor('STOPPING=1', () => socket.messages.some((m) => m.split('\n').includes('STOPPING=1')), 30000);
  t.pass();
});
