/**
 * The push API's gate as the agent API sees it: the metric store's validation and commit, which
 * the composition root connects (`src/process/gslbdProcess.ts`) to the steering capability's
 * (`registerMetricRoutes`' gate in `src/capabilities/steering/pushRoutes.ts`). Declared here by its
 * shape, so this capability imports no other: an agent's report is validated exactly as a push to
 * `POST /metrics/<source>` is, and reaches the metric store the same way (the state store's
 * `steering.pushes`), stamped with the agent's name.
 */
export type MetricPushGate = (source: 'host' | 'service' | 'client', body: unknown, origin?: string) => GatedPush;

/** One problem with a pushed batch, by path. */
export interface PushProblem {
  readonly path: string;
  readonly message: string;
}

/** A validated batch ready to `commit` (apply and count), or why it was rejected (400 malformed, 422 unknown reference). */
export type GatedPush =
  | { readonly ok: true; readonly accepted: number; commit(): void }
  | { readonly ok: false; readonly status: 400 | 422; readonly problems: readonly PushProblem[] };
