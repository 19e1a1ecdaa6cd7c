import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { get } from './api.js';
import type { ConsoleState, HealthReport } from './types.js';
import { EngineView } from './views/engineView.js';
import { DataCentersView } from './views/dataCentersView.js';
import { ShareView } from './views/shareView.js';
import { MapView } from './views/mapView.js';
import { RecordsView } from './views/recordsView.js';
import { ExplainView } from './views/explainView.js';
import { ReplayView } from './views/replayView.js';
import { ClusterView } from './views/clusterView.js';

/** Seconds between two reads of `/health` (last check latency and error) while the page is open. */
const HEALTH_EVERY_MS = 5000;

/**
 * The console: one page of views over the engine's state, which arrives by server-sent events
 * (`/console/events`, every 2 s); the checks' details come from `/health`, re-read every 5 s and
 * after every action.
 */
function App() {
  const [state, setState] = useState<ConsoleState | null>(null);
  const [live, setLive] = useState('connecting');
  const [health, setHealth] = useState<HealthReport | null>(null);
  const readHealth = async (): Promise<void> => {
    const r = await get<HealthReport>('/health');
    setHealth(r.ok ? r.body : null);
  };
  useEffect(() => {
    const events = new EventSource('/console/events');
    events.addEventListener('state', (m) => {
      setLive('on');
      setState(JSON.parse((m as MessageEvent<string>).data) as ConsoleState);
    });
    events.onerror = () => setLive('reconnecting');
    void readHealth();
    const timer = setInterval(() => void readHealth(), HEALTH_EVERY_MS);
    return () => {
      events.close();
      clearInterval(timer);
    };
  }, []);
  return (
    <>
      <header>
        <h1>gslbd console</h1>
        <nav aria-label="Views">
          <ul>
            {[
              ['v-engine', 'Engine'],
              ['v-dcs', 'Data centers'],
              ['v-share', 'Answer share'],
              ['v-map', 'Map'],
              ['v-records', 'Records'],
              ['v-explain', 'Explain and what-if'],
              ['v-replay', 'Replay'],
              ['v-cluster', 'Cluster'],
            ].map(([id, label]) => (
              <li key={id}>
                <a href={`#${id}`}>{label}</a>
              </li>
            ))}
          </ul>
        </nav>
      </header>
      <main>
        <EngineView state={state} live={live} />
        <DataCentersView state={state} health={health} afterAction={readHealth} />
        <ShareView state={state} />
        <MapView state={state} />
        <RecordsView />
        <ExplainView dataCenters={state?.dataCenters.map((d) => d.name) ?? []} />
        <ReplayView dataCenters={state?.dataCenters.map((d) => d.name) ?? []} />
        <ClusterView state={state} />
      </main>
    </>
  );
}

const root = document.getElementById('app')!;
// The shell's "Loading" line goes: preact renders beside what it finds.
root.replaceChildren();
render(<App />, root);
