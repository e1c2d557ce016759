import parsePrometheusTextFormat, { type MetricFamily } from 'parse-prometheus-text-format';

/** A scrape parsed by a real Prometheus text parser, with lookups by name and labels. */
export class Scrape {
  readonly families: MetricFamily[];

  constructor(readonly text: string) {
    this.families = parsePrometheusTextFormat(text);
    // The parser folds a histogram's labelled series into one sample; read as untyped, its _bucket, _sum
    // and _count series come back as the plain labelled series they are.
    this.series = parsePrometheusTextFormat(text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped'));
  }

  /** Every series by its own name (a histogram's as `_bucket`, `_sum`, `_count`). */
  private readonly series: MetricFamily[];

  family(name: string): MetricFamily | undefined {
    return this.families.find((family) => family.name === name);
  }

  private samples(name: string, labels: Record<string, string>) {
    // A histogram's series interleave, so one name may come back as several families: take them all.
    const samples = this.series.filter((family) => family.name === name).flatMap((family) => family.metrics);
    return samples.filter((sample) =>
      Object.entries(labels).every(([key, value]) => sample.labels?.[key] === value),
    );
  }

  /** The sum of a counter's or gauge's samples that have these labels (0 when none). */
  value(name: string, labels: Record<string, string> = {}): number {
    return this.samples(name, labels).reduce((sum, sample) => sum + Number(sample.value ?? 0), 0);
  }

  /** A histogram's observation count and sum over the samples that have these labels. */
  histogram(name: string, labels: Record<string, string> = {}): { count: number; sum: number } {
    return { count: this.value(`${name}_count`, labels), sum: this.value(`${name}_sum`, labels) };
  }

  /** Every label value of every sample. */
  labelValues(): string[] {
    return this.families.flatMap((family) =>
      family.metrics.flatMap((sample) => Object.values(sample.labels ?? {})),
    );
  }
}

export async function scrape(url: string, headers: Record<string, string> = {}): Promise<Scrape> {
  const response = await fetch(url, { headers });
  if (response.status !== 200) throw new Error(`GET ${url}: ${response.status} ${await response.text()}`);
  const contentType = response.headers.get('content-type') ?? '';
  if (!contentType.startsWith('text/plain')) throw new Error(`GET ${url}: content-type ${contentType}`);
  return new Scrape(await response.text());
}

/** The port a worker process logged as `metrics listening`. */
export function metricsPortOf(output: string): number | undefined {
  for (const line of output.split('\n')) {
    if (!line.includes('"metrics listening"')) continue;
    const port = (JSON.parse(line) as { port?: number }).port;
    if (typeof port === 'number') return port;
  }
  return undefined;
}
