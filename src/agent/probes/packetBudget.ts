/**
 * The global cap on probe packets (`probes.maxPacketsPerSecond`): a token bucket holding one
 * second's worth, refilled continuously. Every packet of every train takes a token first, so
 * however many trains run, the agent never sends faster than the cap.
 */
export class PacketBudget {
  private tokens: number;
  private last: number;
  private waiting: Promise<void> = Promise.resolve();

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = perSecond;
    this.last = this.now();
  }

  /** Resolves when a packet may be sent; callers are served in order. */
  take(): Promise<void> {
    const turn = this.waiting.then(() => this.wait());
    this.waiting = turn;
    return turn;
  }

  private async wait(): Promise<void> {
    for (;;) {
      const t = this.now();
      this.tokens = Math.min(this.perSecond, this.tokens + ((t - this.last) * this.perSecond) / 1000);
      this.last = t;
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      await new Promise((r) => setTimeout(r, Math.ceil(((1 - this.tokens) * 1000) / this.perSecond)));
    }
  }
}
