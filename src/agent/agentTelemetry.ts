import { createServer, type Server } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';

/**
 * The agent's own Prometheus metrics (docs/PRODUCT.md §7 operations), served on `metrics.address`
 * and `metrics.port` at `/metrics`. Labels name sources and engines from the configuration,
 * never a probed address.
 */
export class AgentTelemetry {
  readonly registry = new Registry();
  /** 1 while a source's last reading succeeded, 0 after a failure (a missing HAProxy socket, an exporter down). */
  readonly sourceUp = new Gauge({
    name: 'gslbd_agent_source_up',
    help: 'Whether the last reading of a source succeeded',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });
  readonly readings = new Counter({
    name: 'gslbd_agent_source_readings_total',
    help: 'Readings of each source, by result (ok, failed)',
    labelNames: ['source', 'result'] as const,
    registers: [this.registry],
  });
  readonly reports = new Counter({
    name: 'gslbd_agent_reports_total',
    help: 'Reports sent to each engine, by result (accepted, rejected, refused, failed)',
    labelNames: ['engine', 'result'] as const,
    registers: [this.registry],
  });
  readonly pendingProbes = new Gauge({
    name: 'gslbd_agent_pending_probe_results',
    help: 'Probe results waiting for an engine that could not be reached',
    labelNames: ['engine'] as const,
    registers: [this.registry],
  });
  readonly droppedProbes = new Counter({
    name: 'gslbd_agent_dropped_probe_results_total',
    help: 'Probe results dropped: the bound of pending results was reached while an engine was down, or the engine rejected them',
    labelNames: ['engine'] as const,
    registers: [this.registry],
  });
  readonly probeRequests = new Counter({
    name: 'gslbd_agent_probe_requests_total',
    help: 'Probe requests by outcome: queued, probed, fresh (probed or queued recently), backoff (silent network), refused (outside probes.allow), dropped (queue full), failed',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly probeQueue = new Gauge({ name: 'gslbd_agent_probe_queue_length', help: 'Probe requests waiting in the agent', registers: [this.registry] });
  private server: Server | undefined;

  constructor() {
    // The agent's own CPU and memory (process_cpu_seconds_total, process_resident_memory_bytes, …).
    collectDefaultMetrics({ register: this.registry, prefix: 'gslbd_agent_' });
  }

  /**
   * Serves `GET /metrics` on `address`:`port` (0: any free port); resolves with the bound port.
   * @throws Error when the address cannot be bound.
   */
  async listen(address: string, port: number): Promise<number> {
    const server = createServer((req, res) => {
      if (req.method !== 'GET' || req.url !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
        return;
      }
      this.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': this.registry.contentType }).end(text),
        (e: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${(e as Error).message}\n`),
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, address, () => resolve());
    });
    this.server = server;
    const a = server.address();
    return typeof a === 'object' && a ? a.port : port;
  }

  async close(): Promise<void> {
    const s = this.server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
}
