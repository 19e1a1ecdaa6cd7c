/**
 * Mean Opinion Score of a client path from its latency, jitter and loss, by the simplified
 * ITU-T G.107 E-model of Cole and Rosenbluth ("Voice over IP Performance Monitoring", ACM
 * SIGCOMM Computer Communication Review 31(2), 2001, eqs. 5–9), for a G.711 codec with random
 * loss:
 *
 *   d  = latencyMs + 2 · jitterMs        one-way delay including a jitter buffer of twice the jitter
 *   Id = 0.024·d + 0.11·(d − 177.3)·H(d − 177.3)          delay impairment (H = unit step)
 *   Ie = 30 · ln(1 + 15·e)                                 equipment/loss impairment, e = loss fraction
 *   R  = 94.2 − Id − Ie
 *
 * and R to MOS by ITU-T G.107 (06/2015) Annex B, eq. B-4:
 *
 *   MOS = 1                                             for R < 0
 *   MOS = 1 + 0.035·R + R·(R − 60)·(100 − R)·7·10⁻⁶     for 0 ≤ R ≤ 100
 *   MOS = 4.5                                           for R > 100
 *
 * A perfect path scores 4.43 (R = 94.2); the curve is the one VoIP monitors (and seed 004's
 * vendor) use to rank paths, not a listening test.
 *
 * @param latencyMs one-way network latency in ms (agents measuring RTT send half of it), ≥ 0
 * @param jitterMs mean delay variation in ms, ≥ 0
 * @param lossPercent packet loss in percent, 0–100
 * @returns MOS between 1 and 4.5
 */
export function mosFromPath(latencyMs: number, jitterMs: number, lossPercent: number): number {
  const d = latencyMs + 2 * jitterMs;
  const delayImpairment = 0.024 * d + (d > 177.3 ? 0.11 * (d - 177.3) : 0);
  const lossImpairment = 30 * Math.log(1 + 15 * (lossPercent / 100));
  return mosFromR(94.2 - delayImpairment - lossImpairment);
}

/** ITU-T G.107 Annex B eq. B-4: transmission rating factor R to MOS (1–4.5). */
export function mosFromR(r: number): number {
  if (r < 0) return 1;
  if (r > 100) return 4.5;
  // The cubic dips below 1 for 0 < R < 6.5 (its slope at 0 is 0.035 − 0.042); MOS is 1 there.
  return Math.max(1, 1 + 0.035 * r + r * (r - 60) * (100 - r) * 7e-6);
}

/**
 * Exponentially weighted moving average of successive MOS windows, so a score converges over a
 * few measurement windows instead of jumping with one noisy probe (seed 004, docs/PRODUCT.md §3: MOS "converges
 * within a few measurement windows" for first-time clients). `weight` is the share of the new
 * window (1 = no smoothing); with the default 0.5 an old value's weight halves every window,
 * under 13 % after three. Without a previous (fresh) value the window is taken as it is.
 */
export function smoothMos(previous: number | undefined, window: number, weight: number): number {
  return previous === undefined ? window : weight * window + (1 - weight) * previous;
}
