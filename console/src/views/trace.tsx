import type { Explanation } from '../types.js';

/** One step of an `/explain` trace in words: its stage, then each field. */
export function describeStep(step: Record<string, unknown>): string {
  const rest = Object.entries(step).filter(([k]) => k !== 'stage');
  const stage = typeof step.stage === 'string' ? step.stage : 'step';
  return stage + (rest.length ? ': ' + rest.map(([k, v]) => `${k} ${typeof v === 'string' ? v : JSON.stringify(v)}`).join('; ') : '');
}

/** An explanation rendered as the answer and each selection's numbered steps (not raw JSON). */
export function Trace({ e, id }: { e: Explanation; id: string }) {
  return (
    <div id={id} class="trace">
      <p>
        Client {e.client.address}/{e.client.sourcePrefix} located at {e.client.location}; answer scope /{e.answer.scope}
      </p>
      <h4>Answer</h4>
      <ul class="answers">
        {(e.answer.answers.length ? e.answer.answers : ['(no records)']).map((a) => (
          <li key={a}>{a}</li>
        ))}
      </ul>
      {e.selections.map((sel) => (
        <div key={sel.record + sel.type}>
          <h4>
            Steps for {sel.record} {sel.type}
          </h4>
          <ol class="steps">
            {sel.steps.map((st, i) => (
              <li key={i}>{describeStep(st)}</li>
            ))}
          </ol>
        </div>
      ))}
    </div>
  );
}
