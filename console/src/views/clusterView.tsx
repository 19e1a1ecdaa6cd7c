import type { ConsoleState } from '../types.js';

/** The state store and the nodes sharing it (`/status` `store`): one node without a shared store. */
export function ClusterView({ state }: { state: ConsoleState | null }) {
  const store = state?.store;
  return (
    <section id="v-cluster" aria-labelledby="h-cluster">
      <h2 id="h-cluster">Cluster</h2>
      <p id="store">{store ? `State store: ${store.kind}, ${store.state}` : 'State store: ?'}</p>
      {store && store.nodes.length > 0 ? (
        <table id="nodes">
          <caption>Nodes sharing the state store</caption>
          <thead>
            <tr>
              {Object.keys(store.nodes[0]!).map((k) => (
                <th scope="col" key={k}>
                  {k}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {store.nodes.map((n, i) => (
              <tr key={i}>
                {Object.keys(store.nodes[0]!).map((k) => (
                  <td key={k}>{typeof n[k] === 'string' ? n[k] : JSON.stringify(n[k])}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p>One node: no shared state store configured.</p>
      )}
    </section>
  );
}
