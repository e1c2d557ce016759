import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { ApiError } from './api-error.js';

export interface ConsoleRoutesOptions {
  /** Where the built console is (default: dist/console of the package, from src/ or dist/ alike). */
  directory?: string;
}

/**
 * The headers of every console answer. The page runs only its own script and style ('self'), talks only
 * to this API, may not be framed, and sends no Referer: model text it shows as text can never become
 * script, and a link in it cannot leak the console's address.
 */
export const consoleHeaders = {
  'content-security-policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-cache',
} as const;

/**
 * The files the console is made of, and nothing else: a request names one of these or gets 404, so no
 * path (`..`, encoded or not) reaches the file system.
 */
const assets: Readonly<Record<string, string>> = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

/** src/api or dist/api → the package root's dist/console. */
const defaultDirectory = join(import.meta.dirname, '../../dist/console');

/**
 * The web console (src/console, built by `npm run build` into dist/console) at /console. Its files hold no
 * data, so they need no token (a browser cannot send one on navigation); every API call the page makes
 * carries the token. The host guard applies as for every route.
 */
export const consoleRoutes: FastifyPluginAsync<ConsoleRoutesOptions> = async (app, options) => {
  const directory = options.directory ?? defaultDirectory;
  const route = { config: { withoutToken: true }, schema: { hide: true } };

  const page = async (_request: unknown, reply: FastifyReply) =>
    sendFile(reply, directory, 'index.html', 'text/html; charset=utf-8');
  app.get('/console', route, page);
  app.get('/console/', route, page);
  app.get<{ Params: { file: string } }>('/console/assets/:file', route, async (request, reply) => {
    const { file } = request.params;
    const type = Object.hasOwn(assets, file) ? assets[file] : undefined;
    if (type === undefined) {
      reply.headers(consoleHeaders);
      throw new ApiError('not_found', 'the console has no such file', { resource: 'console_asset' });
    }
    return sendFile(reply, directory, file, type);
  });
};

async function sendFile(reply: FastifyReply, directory: string, file: string, type: string) {
  reply.headers(consoleHeaders);
  let content: Buffer;
  try {
    content = await readFile(join(directory, file));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return reply
      .code(503)
      .type('text/plain; charset=utf-8')
      .send(
        `The Ratchet console is not built: ${join(directory, file)} is missing. Run \`npm run build\` ` +
          '(npm install runs it in a checkout), then reload this page.\n',
      );
  }
  return reply.type(type).send(content);
}
