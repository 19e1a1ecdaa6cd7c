import { connect, type Socket } from 'node:net';
import { targetAddress } from './healthTargets.js';

/**
 * The floor under the health benchmark's CPU per check: the least a Node process does for one
 * HTTP check on a new connection with Node's own `net`, and nothing of gslbd — a reused
 * `net.Socket` per connection as `checkSockets.ts` does, one fixed request, the response read into
 * one shared buffer, the connection ended with an RST as soon as any byte arrives, and no state,
 * metrics, deadlines or response parsing. `checksPerSecond` checks per second go round-robin over
 * `count` addresses of `healthTargets.ts`, started on `tickMs` ticks. After `warmupMs` it prints
 * one JSON line: checks/s and process CPU µs per check (all, and kernel), over `measureMs`.
 * docs/BENCHMARKS-HISTORY.md (health: investigations) compares gslbd's engine with it. Usage:
 *   node healthFloor.js <port> <count> <checksPerSecond> <tickMs> <warmupMs> <measureMs>
 */
async function main(): Promise<void> {
  const numbers = process.argv.slice(2).map(Number);
  const [port, count, checksPerSecond, tickMs, warmupMs, measureMs] = numbers as [number, number, number, number, number, number];
  if (numbers.length !== 6 || numbers.some((n) => !Number.isFinite(n) || n <= 0)) {
    process.stderr.write('usage: healthFloor.js <port> <count> <checksPerSecond> <tickMs> <warmupMs> <measureMs>\n');
    process.exit(2);
  }
  const request = Buffer.from(
    'GET /health HTTP/1.1\r\nHost: 127.1.0.1\r\nUser-Agent: gslbd-health-check\r\nAccept: */*\r\nConnection: close\r\n\r\n',
    'latin1',
  );
  const readBuffer = Buffer.allocUnsafe(16 * 1024);
  const idle: Socket[] = [];
  let counting = false;
  let checks = 0;
  let failures = 0;
  const open = (address: string): void => {
    const reused = idle.pop();
    if (reused) {
      reused.connect(port, address);
      return;
    }
    const socket = connect({
      host: address,
      port,
      onread: {
        buffer: readBuffer,
        callback: () => {
          if (counting) checks++;
          socket.resetAndDestroy();
          return true;
        },
      },
    });
    socket.on('connect', () => socket.write(request));
    socket.on('error', () => {
      if (counting) failures++;
    });
    socket.on('close', () => idle.push(socket));
  };
  let next = 0;
  let started = 0;
  const t0 = performance.now();
  setInterval(() => {
    const due = Math.floor(((performance.now() - t0) * checksPerSecond) / 1000);
    for (; started < due; started++) {
      open(targetAddress(next));
      next = (next + 1) % count;
    }
  }, tickMs);
  await new Promise((r) => setTimeout(r, warmupMs));
  counting = true;
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  await new Promise((r) => setTimeout(r, measureMs));
  const cpu = process.cpuUsage(cpu0);
  const seconds = (performance.now() - wall0) / 1000;
  process.stdout.write(
    `${JSON.stringify({ tickMs, checksPerSecond: checks / seconds, failures, cpuPercent: (100 * (cpu.user + cpu.system)) / 1e6 / seconds, cpuUsPerCheck: (cpu.user + cpu.system) / checks, kernelUsPerCheck: cpu.system / checks })}\n`,
  );
  process.exit(0);
}

if (process.argv[1]?.endsWith('healthFloor.js')) void main();
