/**
 * Thrown by a location database, or a table derived from it, that was used after its release: a
 * reload replaced it and its memory is gone (src/capabilities/geo/README.md "Reload"). Never seen
 * on the query path, which reads only the current snapshot's database, within one turn.
 */
export class LocationDbReleasedError extends Error {
  readonly code = 'ERR_GSLBD_TABLE_RELEASED';
  constructor(what: string) {
    super(`${what} was released (a reload replaced it)`);
    this.name = 'LocationDbReleasedError';
  }
}

/**
 * The release state of one location database: whether it was released, and who must free their
 * derived tables then (`LocationDb.onRelease`). Shared by the database implementations.
 */
export class ReleaseState {
  private listeners: (() => void)[] | undefined = [];

  /** Whether {@link release} ran. */
  get released(): boolean {
    return this.listeners === undefined;
  }

  /** Marks the database released and calls every listener once, in registration order; idempotent. */
  release(): void {
    for (const l of this.markReleased()) l();
  }

  /**
   * Marks the database released and returns the listeners for the caller to call, once each, in
   * order (a release spread over turns: `LocationDb.releaseSteps`); none when it was released already.
   */
  markReleased(): readonly (() => void)[] {
    const listeners = this.listeners ?? [];
    this.listeners = undefined;
    return listeners;
  }

  /** Calls `listener` at {@link release}, or at once when it already ran. */
  onRelease(listener: () => void): void {
    if (this.listeners === undefined) listener();
    else this.listeners.push(listener);
  }

  /**
   * Throws when released.
   * @throws LocationDbReleasedError naming `what`.
   */
  check(what: string): void {
    if (this.listeners === undefined) throw new LocationDbReleasedError(what);
  }
}
