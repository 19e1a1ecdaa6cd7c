import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';

/**
 * The Go side of the CoreDNS bridge, run from `npm test` so CI runs it: `go vet` and `go test`
 * over every package in coredns-bridge/ (frame codec against the shared golden vectors, the
 * engine client under out-of-order answers, timeouts, restarts and overload, the plugin with
 * CoreDNS's test helpers). The modules come from the Go module cache that test/setup.sh filled.
 */

const here = fileURLToPath(new URL('.', import.meta.url));
const BRIDGE = resolve(here, existsSync(resolve(here, '../../coredns-bridge')) ? '../../coredns-bridge' : '../../../coredns-bridge');

function go(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((done) => {
    execFile(
      'go',
      args,
      {
        cwd: BRIDGE,
        env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: `${process.env.GOFLAGS ?? ''} -mod=readonly`.trim() },
        timeout: 600000,
        maxBuffer: 16 << 20,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        done({ code, output: `${stdout}${stderr}` });
      },
    );
  });
}

test('coredns-bridge: go vet is clean and go test passes', async (t) => {
  t.timeout(600000);
  const vet = await go(['vet', './...']);
  t.is(vet.code, 0, vet.output);
  const unit = await go(['test', '-count=1', './...']);
  t.log(unit.output.trim());
  t.is(unit.code, 0, unit.output);
  t.regex(unit.output, /ok\s+\S+\/internal\/frame/);
  t.regex(unit.output, /ok\s+\S+\/internal\/engine/);
  t.regex(unit.output, /ok\s+\S+\/gslb/);
});
