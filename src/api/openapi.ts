import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';

export interface OpenApiOptions {
  /** Whether the routes need a bearer token (then the document says so). */
  authenticated: boolean;
}

/**
 * The OpenAPI document, generated from the zod schemas the routes validate with, served at /openapi.json,
 * and its Swagger UI at /docs. Register before the routes: the document collects them as they are added.
 */
export function registerOpenApi(app: FastifyInstance, options: OpenApiOptions): void {
  app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Ratchet API',
        description:
          'Durable multi-agent LLM workflows: sessions, runs, questions to people, and a resumable ' +
          'event stream (Server-Sent Events). Every error is `{error: {code, message, details}}`.',
        version: '1',
      },
      // The scheme is declared only when `api.tokens` makes operations need it, and each operation says
      // whether it does: the public ones (health checks) take no token.
      ...(options.authenticated
        ? { components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } } }
        : {}),
    },
    transform: (input) => {
      const transformed = jsonSchemaTransform(input);
      if (!options.authenticated) return transformed;
      const open = input.route.config?.public === true;
      return {
        ...transformed,
        schema: { ...transformed.schema, security: open ? [] : [{ bearerAuth: [] }] },
      };
    },
    transformObject: (document) =>
      withOptionalBodies(withoutUnusedSchemas(jsonSchemaTransformObject(document))),
  });
  app.register(fastifySwaggerUi, {
    routePrefix: '/docs',
    // Swagger UI's page runs its own scripts and talks to this API only; no validator badge from
    // validator.swagger.io. It may not be framed (frame-guard.ts adds that to every answer).
    uiConfig: { validatorUrl: null },
    staticCSP: swaggerUiPolicy,
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

/**
 * The Content-Security-Policy of Swagger UI's files: its scripts and styles from here (it sets inline styles
 * as it draws), requests to this API only, no plugins, no forms elsewhere.
 */
const swaggerUiPolicy = [
  "default-src 'self'",
  "base-uri 'self'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

type OpenApiDocument = ReturnType<typeof jsonSchemaTransformObject>;

/**
 * The zod transform adds every named schema twice, as request and as response (`RunInput`, `Run`); only
 * the ones an operation, or a schema kept, refers to stay.
 */
function withoutUnusedSchemas(document: OpenApiDocument): OpenApiDocument {
  const { components = {}, ...rest } = document as { components?: { schemas?: Record<string, unknown> } };
  const schemas = components.schemas ?? {};
  const used = new Set<string>();
  let pending = [JSON.stringify(rest)];
  while (pending.length > 0) {
    const found = [...pending.join('').matchAll(/"#\/components\/schemas\/([^"]+)"/g)]
      .map((match) => decodeURIComponent(match[1] ?? ''))
      .filter((name) => !used.has(name) && name in schemas);
    for (const name of found) used.add(name);
    pending = found.map((name) => JSON.stringify(schemas[name]));
  }
  const kept = Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name)));
  return { ...rest, components: { ...components, schemas: kept } } as OpenApiDocument;
}

/**
 * @fastify/swagger marks every request body required; a body whose schema takes null (cancel, session
 * create: Fastify hands the validator null for a request without a body) may be left out, so say so.
 */
function withOptionalBodies(document: OpenApiDocument): OpenApiDocument {
  type Operation = { requestBody?: { required?: boolean; content?: Record<string, { schema?: unknown }> } };
  const paths = (document as { paths?: Record<string, Record<string, Operation>> }).paths ?? {};
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      const body = operation.requestBody;
      const schema = body?.content?.['application/json']?.schema as
        | { anyOf?: { type?: unknown }[] }
        | undefined;
      if (body && schema?.anyOf?.some((alternative) => alternative.type === 'null')) body.required = false;
    }
  }
  return document;
}
