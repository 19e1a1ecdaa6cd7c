/**
 * The decision trace behind `/explain` and `gslbd explain`. A sink exists only when a trace was
 * asked for; stages write `if (s.trace) s.trace.step(...)`, so the query path builds nothing.
 */

/** One stage's account of what it saw and decided; details are JSON-serialisable. */
export interface TraceStep {
  readonly stage: string;
  readonly [detail: string]: unknown;
}

/** Collects trace steps in pipeline order. */
export class TraceSink {
  readonly steps: TraceStep[] = [];

  step(stage: string, detail: Record<string, unknown>): void {
    this.steps.push({ stage, ...detail });
  }
}
