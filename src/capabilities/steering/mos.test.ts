import test from 'ava';
import fc from 'fast-check';
import { mosFromPath, mosFromR, smoothMos } from './mos.js';

// Expected values worked by hand from Cole & Rosenbluth's R and G.107 Annex B (see mos.ts).
const cases: [number, number, number, number][] = [
  [0, 0, 0, 4.427799],
  [20, 2, 0, 4.417342],
  [150, 30, 1, 4.074722],
  [200, 0, 0, 4.255946],
  [40, 5, 2, 4.202202],
  [100, 10, 5, 3.80169],
  [300, 50, 20, 1.209885],
  [0, 0, 100, 1.049541],
];

for (const [latency, jitter, loss, mos] of cases) {
  test(`latency ${latency} ms, jitter ${jitter} ms, loss ${loss} % → MOS ${mos}`, (t) => {
    t.true(Math.abs(mosFromPath(latency, jitter, loss) - mos) < 1e-6, `${mosFromPath(latency, jitter, loss)}`);
  });
}

test('R to MOS at the curve ends and known points (G.107 Annex B)', (t) => {
  t.is(mosFromR(-5), 1);
  t.is(mosFromR(0), 1);
  t.is(mosFromR(101), 4.5);
  t.true(Math.abs(mosFromR(50) - 2.575) < 1e-9);
  t.true(Math.abs(mosFromR(80) - 4.024) < 1e-9);
});

test('MOS stays in [1, 4.5] and never improves when latency, jitter or loss grow', (t) => {
  const metric = fc.double({ min: 0, max: 1000, noNaN: true });
  const loss = fc.double({ min: 0, max: 100, noNaN: true });
  fc.assert(
    fc.property(metric, metric, loss, metric, (l, j, p, extra) => {
      const m = mosFromPath(l, j, p);
      return (
        m >= 1 &&
        m <= 4.5 &&
        mosFromPath(l + extra, j, p) <= m + 1e-12 &&
        mosFromPath(l, j + extra, p) <= m + 1e-12 &&
        mosFromPath(l, j, Math.min(100, p + extra / 10)) <= m + 1e-12
      );
    }),
  );
  t.pass();
});

test('smoothing converges over a few windows: with weight 0.5 an old score keeps 12.5 % after three windows', (t) => {
  let m = smoothMos(undefined, 4.4, 0.5);
  t.is(m, 4.4, 'the first window is taken as it is');
  const seen: number[] = [];
  for (let i = 0; i < 3; i++) seen.push((m = smoothMos(m, 2.0, 0.5)));
  t.deepEqual(seen, [3.2, 2.6, 2.3]);
  t.is(smoothMos(3, 2, 1), 2, 'weight 1 disables smoothing');
});
