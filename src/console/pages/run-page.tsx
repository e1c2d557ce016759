import type { PageProps } from '../page-props.js';

export function RunPage({ params }: PageProps) {
  return (
    <section>
      <h1>Run {params.id}</h1>
    </section>
  );
}
