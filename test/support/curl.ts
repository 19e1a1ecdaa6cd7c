import { execFile } from 'node:child_process';

/**
 * Runs the real `curl` (Debian package curl, installed by `test/setup.sh`) for one request and
 * returns the status line's code and the response headers; never follows redirects. A missing
 * `curl` is an error, never a skipped test (a missing peer fails the test).
 */

/** What one request got back. */
export interface CurlResponse {
  readonly status: number;
  /** Response headers by lower-case name (the last line of a repeated header). */
  readonly headers: ReadonlyMap<string, string>;
  readonly body: string;
}

/**
 * `curl -s -S -i --max-time 10 ARGS`: `args` hold the URL and options such as `--interface
 * 127.0.0.2` (the source address), `-H 'Host: …'`, `--request-target`, `--path-as-is`,
 * `--cacert`, `--resolve`.
 * @throws Error when curl is not installed, fails (connection refused, TLS error, timeout), or
 *   prints no status line.
 */
export function curl(args: readonly string[]): Promise<CurlResponse> {
  return new Promise((resolve, reject) => {
    execFile('curl', ['-s', '-S', '-i', '--max-time', '10', ...args], { timeout: 15_000 }, (err, stdout, stderr) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(new Error('curl is not installed: run `bash test/setup.sh` (Debian package curl)'));
        return;
      }
      if (err) {
        reject(new Error(`curl ${args.join(' ')} failed: ${err.message}\n${stderr}`));
        return;
      }
      const end = stdout.indexOf('\r\n\r\n');
      const head = (end < 0 ? stdout : stdout.slice(0, end)).split('\r\n');
      const status = /^HTTP\/[\d.]+ (\d{3})/.exec(head[0] ?? '');
      if (!status) {
        reject(new Error(`curl ${args.join(' ')} printed no status line:\n${stdout}`));
        return;
      }
      const headers = new Map<string, string>();
      for (const line of head.slice(1)) {
        const colon = line.indexOf(':');
        if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
      }
      resolve({ status: Number(status[1]), headers, body: end < 0 ? '' : stdout.slice(end + 4) });
    });
  });
}
