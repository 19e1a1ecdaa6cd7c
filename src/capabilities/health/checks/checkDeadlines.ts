/** A check that can time out. */
export interface TimedCheck {
  /** Called when the check's deadline has passed; a check that already finished ignores it. */
  timedOut(): void;
}

/**
 * The deadlines of one timeout length, in a ring: checks with the same timeout are armed in the
 * order they start, so their deadlines come in order and the ring is a FIFO. A disarmed slot is
 * emptied (the check is not kept alive until its deadline).
 */
class DeadlineRing {
  private deadlines = new Float64Array(64);
  private checks: (TimedCheck | undefined)[] = new Array<TimedCheck | undefined>(64);
  private mask = 63;
  /** Sequence numbers: slots head…tail−1 are in use (slot = seq & mask). */
  private head = 0;
  private tail = 0;

  push(deadlineMs: number, check: TimedCheck): number {
    if (this.tail - this.head > this.mask) this.grow();
    const seq = this.tail++;
    this.deadlines[seq & this.mask] = deadlineMs;
    this.checks[seq & this.mask] = check;
    return seq;
  }

  disarm(seq: number): void {
    if (seq >= this.head && seq < this.tail) this.checks[seq & this.mask] = undefined;
  }

  /** Moves the checks due by `nowMs` to `expired`; drops disarmed slots at the head. */
  takeDue(nowMs: number, expired: TimedCheck[]): void {
    while (this.head < this.tail) {
      const i = this.head & this.mask;
      const check = this.checks[i];
      if (check !== undefined && this.deadlines[i]! > nowMs) return;
      this.checks[i] = undefined;
      this.head++;
      if (check !== undefined) expired.push(check);
    }
  }

  /** The earliest deadline of an armed check (after dropping disarmed slots at the head), or Infinity. */
  nextDeadline(): number {
    while (this.head < this.tail && this.checks[this.head & this.mask] === undefined) this.head++;
    return this.head < this.tail ? this.deadlines[this.head & this.mask]! : Infinity;
  }

  private grow(): void {
    const size = (this.mask + 1) * 2;
    const deadlines = new Float64Array(size);
    const checks = new Array<TimedCheck | undefined>(size);
    for (let seq = this.head; seq < this.tail; seq++) {
      deadlines[seq & (size - 1)] = this.deadlines[seq & this.mask]!;
      checks[seq & (size - 1)] = this.checks[seq & this.mask];
    }
    this.deadlines = deadlines;
    this.checks = checks;
    this.mask = size - 1;
  }
}

/**
 * Check timeouts from one timer instead of a `setTimeout` and `clearTimeout` per check (a Node
 * `Timeout` object and two list operations each, at 2,000 checks/s: docs/BENCHMARKS-HISTORY.md, health).
 * Deadlines are kept per timeout length in a FIFO ring; the timer wakes on `tickMs` boundaries
 * (a check times out up to `tickMs` late, like the scheduler starts checks up to a tick late)
 * and hands the expired checks their `timedOut()` one event-loop turn later (`setImmediate`, after
 * the poll phase), so when a busy process wakes late, an answer that had already arrived still
 * counts: a stalled engine must not mark healthy targets down. The timer is unref'd: a check in
 * flight keeps the process alive through its own socket.
 */
export class CheckDeadlines {
  private readonly rings = new Map<number, DeadlineRing>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;

  constructor(private readonly tickMs = 10) {}

  /**
   * Arms `check` to time out `timeoutMs` after `startMs` (`performance.now()` at the check's
   * start; checks of one timeout length must be armed in start order). Returns the token for
   * {@link disarm}.
   */
  arm(timeoutMs: number, startMs: number, check: TimedCheck): number {
    let ring = this.rings.get(timeoutMs);
    if (!ring) this.rings.set(timeoutMs, (ring = new DeadlineRing()));
    const deadline = startMs + timeoutMs;
    const seq = ring.push(deadline, check);
    if (deadline < this.timerAt) this.schedule(deadline);
    return seq;
  }

  /** Forgets a check's deadline (it finished first). */
  disarm(timeoutMs: number, token: number): void {
    this.rings.get(timeoutMs)?.disarm(token);
  }

  private schedule(deadline: number): void {
    const at = Math.ceil(deadline / this.tickMs) * this.tickMs;
    if (at >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.fire(), Math.max(0, at - performance.now())).unref();
  }

  private fire(): void {
    this.timer = undefined;
    // Node's timers run on the loop's millisecond clock and may fire a fraction of a millisecond
    // before `timerAt` by performance.now(): only what is due by the precise clock expires, the
    // rest waits for the next tick, so no check ever times out before its timeout.
    const now = performance.now();
    this.timerAt = Infinity;
    const expired: TimedCheck[] = [];
    let next = Infinity;
    for (const ring of this.rings.values()) {
      ring.takeDue(now, expired);
      next = Math.min(next, ring.nextDeadline());
    }
    if (expired.length > 0)
      setImmediate(() => {
        for (const c of expired) c.timedOut();
      });
    if (next < Infinity) this.schedule(next);
  }
}

/** The deadlines every check shares. */
export const checkDeadlines = new CheckDeadlines();
