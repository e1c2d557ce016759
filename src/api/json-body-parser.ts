import type { FastifyInstance } from 'fastify';
import { ApiError } from './api-error.js';
import { describeValidationIssues } from './validation-issues.js';

/**
 * How deeply a JSON request body may nest objects and arrays (the top-level value is level 1). Our own
 * bodies need 4 (run input parts) and an MCP request about 8, so 64 leaves metadata plenty of room while
 * keeping far below what a recursive walk can take: a body nested thousands of levels deep overflowed the
 * stack of the validator or the serializer (a 500), and Redis's Lua cjson refuses 1,000 levels.
 */
export const maxBodyDepth = 64;

/**
 * Replaces Fastify's JSON body parser with one that first measures the nesting of the raw text, without
 * recursion, and answers 400 naming the limit past `maxBodyDepth`; then it parses exactly as Fastify does
 * (invalid bodies, `__proto__` and `constructor` keys are refused as before; an empty one is no body). Every route that
 * takes JSON, /v1 and /mcp, goes through it, before anything recursive touches the body.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  const fastifyParser = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    // No bytes is no body, whatever the content-type says (clients send the header on every request): a
    // route whose body is optional takes it, one that needs a body says so naming it.
    if (text === '') {
      done(null, undefined);
      return;
    }
    if (nestsDeeperThan(text, maxBodyDepth)) {
      const issues = [
        { location: 'body', path: '', message: `nested deeper than ${maxBodyDepth} levels (the limit)` },
      ];
      done(
        new ApiError('invalid_request', describeValidationIssues(issues), {
          issues,
          max_depth: maxBodyDepth,
        }),
        undefined,
      );
      return;
    }
    // The default parser answers through `done`; its return value carries nothing.
    void fastifyParser(request, text, done);
  });
}

/**
 * Whether the JSON text opens more than `limit` objects or arrays inside one another. One pass over the
 * characters, skipping string contents (with their escapes); the text need not be valid JSON (the parser
 * that runs next says so when it is not).
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const character = text.charCodeAt(index);
    if (inString) {
      if (character === backslash) index++;
      else if (character === quote) inString = false;
    } else if (character === quote) {
      inString = true;
    } else if (character === openBrace || character === openBracket) {
      depth++;
      if (depth > limit) return true;
    } else if (character === closeBrace || character === closeBracket) {
      depth--;
    }
  }
  return false;
}

const quote = 0x22;
const backslash = 0x5c;
const openBrace = 0x7b;
const closeBrace = 0x7d;
const openBracket = 0x5b;
const closeBracket = 0x5d;
