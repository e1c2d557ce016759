import type { FastifyInstance, RouteOptions } from 'fastify';
import type { ApiEngine } from '../../src/api/index.js';
import type { ApiConfig } from '../../src/config/index.js';
import { type Logger, silentLogger } from '../../src/log/index.js';
import type { Script } from '../../src/models/index.js';
import { createHttpServer } from '../../src/server/index.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness, type HarnessOptions } from '../helpers/harness.js';

export interface ApiHarnessOptions {
  script: Script;
  /** Overrides of the config's `api` section. */
  api?: Partial<ApiConfig>;
  /** Start an in-process worker (default true). */
  worker?: boolean;
  logger?: Logger;
  /** Wraps the engine the API uses (to observe calls). */
  wrapEngine?: (engine: ApiEngine) => ApiEngine;
  pingRedis?: () => Promise<unknown>;
  /** Told of every route the server registers (its plugins' too), before it listens. */
  onRoute?: (route: RouteOptions) => void;
  /** Further options of the underlying Harness (another provider, agent settings). */
  harness?: Omit<HarnessOptions, 'script'>;
}

/** A Harness (own key prefix, scripted model, in-process worker) with the HTTP API listening on a free port. */
export class ApiHarness {
  readonly harness: Harness;
  readonly app: FastifyInstance;
  private baseUrl = '';

  private constructor(harness: Harness, app: FastifyInstance) {
    this.harness = harness;
    this.app = app;
  }

  static async start(options: ApiHarnessOptions): Promise<ApiHarness> {
    const harness = new Harness({ script: options.script, ...options.harness });
    try {
      if (options.worker !== false) await harness.startWorker();
      const config = { ...harness.loaded.config, api: { ...harness.loaded.config.api, ...options.api } };
      const engine = options.wrapEngine ? options.wrapEngine(harness.engine) : harness.engine;
      const app = createHttpServer({
        engine,
        config,
        logger: options.logger ?? silentLogger(),
        bindHost: '127.0.0.1',
        pingRedis: options.pingRedis ?? (() => harness.redis.ping()),
      });
      const { onRoute } = options;
      if (onRoute) app.addHook('onRoute', (route) => onRoute(route));
      const api = new ApiHarness(harness, app);
      await app.listen({ host: '127.0.0.1', port: 0 });
      const address = app.server.address();
      if (address === null || typeof address === 'string') throw new Error('no TCP address');
      api.baseUrl = `http://127.0.0.1:${address.port}`;
      return api;
    } catch (error) {
      await harness.close();
      throw error;
    }
  }

  get url(): string {
    return this.baseUrl;
  }

  get engine(): ApiEngine {
    return this.harness.engine;
  }

  /** A JSON request over HTTP; the body is parsed when there is one. */
  async request(
    method: string,
    path: string,
    options: { body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
    // biome-ignore lint/suspicious/noExplicitAny: a test reads any field of the answer and asserts on it
  ): Promise<{ status: number; body: any; headers: Headers }> {
    const headers: Record<string, string> = { ...options.headers };
    let body: string | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    // As the typed client does: JSON on every request that changes something, with a body or none.
    const changes = method !== 'GET' && method !== 'HEAD';
    if ((body !== undefined || changes) && headers['content-type'] === undefined)
      headers['content-type'] = 'application/json';
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const text = await response.text();
    return {
      status: response.status,
      body: text === '' ? undefined : JSON.parse(text),
      headers: response.headers,
    };
  }

  /** Submits a run over HTTP (POST /v1/runs) and returns its ids; fails the test unless it is accepted. */
  async submitRun(
    input: string,
    options: { agent?: string; headers?: Record<string, string> } = {},
  ): Promise<{ runId: string; sessionId: string }> {
    const body = { input, ...(options.agent === undefined ? {} : { agent: options.agent }) };
    const submitted = await this.request('POST', '/v1/runs', {
      body,
      ...(options.headers ? { headers: options.headers } : {}),
    });
    if (submitted.status !== 202) throw new Error(`run not accepted: ${JSON.stringify(submitted.body)}`);
    return { runId: submitted.body.run_id, sessionId: submitted.body.session_id };
  }

  /** Waits (up to 30 s) until GET /v1/runs/:id shows the status. */
  async untilRunStatus(runId: string, status: string): Promise<void> {
    await waitFor(
      async () => (await this.request('GET', `/v1/runs/${runId}`)).body.status === status,
      30_000,
      `run ${runId} ${status}`,
    );
  }

  /** Waits (up to 30 s) until the run asks a question, and returns the question's id. */
  async pendingQuestion(runId: string): Promise<string> {
    let questionId: string | undefined;
    await waitFor(
      async () => {
        questionId = (await this.engine.getRun(runId))?.pending_question?.id;
        return questionId !== undefined;
      },
      30_000,
      `a question of run ${runId}`,
    );
    return questionId as string;
  }

  async close(): Promise<void> {
    try {
      const closing = this.app.close();
      // A client may leave a connection open that never carried a request (undici does, when an
      // EventSource closes); the server would wait for its idle timeout.
      this.app.server.closeAllConnections();
      await closing;
    } finally {
      await this.harness.close();
    }
  }
}
