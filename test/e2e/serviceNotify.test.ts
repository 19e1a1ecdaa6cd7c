import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, startEngine, stopAllEngines } from '../support/engineProcess.js';
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
async function notifySocket(path: string): Promise<{ messages: string[]; senders: number[]; close(): void }> {
  const py = spawn(
    'python3',
    [
      '-c',
      // SO_PASSCRED: each datagram carries its sender's pid, as systemd reads it (NotifyAccess=main).
      [
        'import json, socket, struct, sys',
        's = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)',
        's.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)',
        's.bind(sys.argv[1])',
        'print("bound", flush=True)',
        'while True:',
        '    data, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(12))',
        '    pid = next((struct.unpack("iII", d[:12])[0] for l, t, d in anc if l == socket.SOL_SOCKET and t == socket.SCM_CREDENTIALS), 0)',
        '    print(json.dumps([pid, data.decode()]), flush=True)',
      ].join('\n'),
      path,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const messages: string[] = [];
  const senders: number[] = [];
  let bound = false;
  py.stdout.setEncoding('utf8');
  let partial = '';
  py.stdout.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const l of lines) {
      if (l === 'bound') bound = true;
      else {
        const [pid, text] = JSON.parse(l) as [number, string];
        senders.push(pid);
        messages.push(text);
      }
    }
  });
  await waitFor('python3 to bind the notify socket', () => bound, 20000);
  return { messages, senders, close: () => py.kill() };
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

/**
 * A live systemd cannot run here (PID 1 is not systemd; `systemctl is-system-running` says
 * `offline`), so the protocol is checked against a real listener that reads each datagram's sender
 * as systemd does (SCM_CREDENTIALS): what a `Type=notify` unit with `NotifyAccess=main` accepts.
 */
test('reload and replace as sd_notify cycles: RELOADING=1 then READY=1 from the main process; a replace names the new MAINPID, whose own notifications follow', async (t) => {
  t.timeout(180000);
  const path = join(dir, 'replace.sock');
  const socket = await notifySocket(path);
  t.teardown(() => socket.close());
  const token = 'notify-replace-token-0123456789';
  const file = join(dir, 'replace.yaml');
  writeFileSync(file, `listeners:\n  dns: [{ address: 127.0.0.1, port: 0 }]\n  admin: { address: 127.0.0.1, port: 0, token: ${token} }\n${EXAMPLE_ZONE}\n`);
  const engine = spawn(process.execPath, [CLI, 'serve', file], {
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
    env: { ...process.env, NOTIFY_SOCKET: path },
  });
  t.teardown(() => {
    try {
      process.kill(-engine.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  });
  let log = '';
  engine.stdout!.on('data', (c: Buffer) => (log += c.toString()));
  const oldPid = engine.pid!;
  const lines = (i: number): string[] => socket.messages[i]!.split('\n');
  const seen = async (what: string, n: number): Promise<void> => void (await waitFor(what, () => socket.messages.length >= n, 60000));

  await seen('READY=1 at start', 1);
  t.true(lines(0).includes('READY=1') && lines(0).includes(`MAINPID=${oldPid}`));
  t.is(socket.senders[0], oldPid);

  // A reload: RELOADING=1 with the monotonic time, then READY=1, both from the main process.
  process.kill(oldPid, 'SIGHUP');
  await seen('the reload cycle', 3);
  t.true(lines(1).includes('RELOADING=1'), socket.messages[1]);
  t.regex(socket.messages[1]!, /^MONOTONIC_USEC=\d+$/m);
  t.true(lines(2).includes('READY=1'), socket.messages[2]);
  t.deepEqual(socket.senders.slice(1, 3), [oldPid, oldPid]);

  // A replace: the old (main) process opens the cycle and closes it naming the new main process.
  const admin = /"admin":"([^"]+)"/.exec(log)![1]!;
  const ctl = spawnSync(process.execPath, [CLI, 'ctl', '--admin', `http://${admin}`, 'replace'], {
    env: { ...process.env, GSLBD_TOKEN: token },
    encoding: 'utf8',
  });
  t.is(ctl.status, 0, `${ctl.stdout}${ctl.stderr}`);
  const newPid = (JSON.parse(ctl.stdout) as { pid: number }).pid;
  await seen('the replace cycle', 5);
  t.true(lines(3).includes('RELOADING=1'), socket.messages[3]);
  t.true(lines(4).includes('READY=1') && lines(4).includes(`MAINPID=${newPid}`), socket.messages[4]);
  t.deepEqual(socket.senders.slice(3, 5), [oldPid, oldPid], 'sent by the main process of the moment (NotifyAccess=main)');
  t.is(socket.messages.length, 5, 'the new process announced nothing while it was not the main process');

  // The new main process inherited NOTIFY_SOCKET: its own reloads and its stop are announced by it.
  process.kill(newPid, 'SIGHUP');
  await seen("the new process's reload cycle", 7);
  t.true(lines(5).includes('RELOADING=1') && lines(6).includes('READY=1'));
  process.kill(newPid, 'SIGTERM');
  await seen('STOPPING=1', 8);
  t.true(lines(7).includes('STOPPING=1'));
  t.deepEqual(socket.senders.slice(5), [newPid, newPid, newPid]);
});
