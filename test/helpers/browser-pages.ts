import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import type { Message } from '../../src/chat/index.js';

/** Where the browser toolbox tests write the screenshots the model was sent (git-ignored). */
export const browserScreenshotDir = resolve(import.meta.dirname, '../../test-results/browser');

/** A loopback HTTP server for the browser tests, counting the requests it got by path. */
export interface PageServer {
  origin: string;
  port: number;
  requests: string[];
  close(): Promise<void>;
}

type Handler = (request: IncomingMessage, response: ServerResponse, server: PageServer) => void;

export async function startPageServer(handler: Handler): Promise<PageServer> {
  const requests: string[] = [];
  let state: PageServer | undefined;
  const server: Server = createServer((request, response) => {
    requests.push(request.url ?? '');
    if (state) handler(request, response, state);
  });
  // Upgrades (WebSockets) are counted too, then refused.
  server.on('upgrade', (request, socket) => {
    requests.push(`upgrade ${request.url ?? ''}`);
    socket.destroy();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  state = {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
  return state;
}

export function html(response: ServerResponse, body: string, status = 200): void {
  response.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
  response.end(body);
}

/**
 * The site the scripted model browses: a shop with a form, and hostile pages that try to reach `internal`
 * (an address the browser may not reach: `localhost`, which resolves to loopback and is not trusted).
 */
export function shopSite(internalPort: () => number): Handler {
  return (request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const internal = `http://localhost:${internalPort()}`;
    switch (url.pathname) {
      case '/':
        return html(
          response,
          `<!doctype html><html><head><title>Shop</title></head><body>
          <h1>Welcome to the shop</h1>
          <p><a id="form-link" href="/form">Order a mug</a></p>
          <img src="/logo.svg" alt="logo"></body></html>`,
        );
      case '/logo.svg':
        response.writeHead(200, { 'content-type': 'image/svg+xml' });
        return response.end(
          '<svg xmlns="http://www.w3.org/2000/svg" width="60" height="60"><circle cx="30" cy="30" r="25" fill="teal"/></svg>',
        );
      case '/form':
        return html(
          response,
          `<!doctype html><html><head><title>Order</title></head><body>
          <h1>Order a mug</h1>
          <form action="/ordered" method="get">
            <label>Name <input id="name" name="name"></label>
            <label>Colour <select id="colour" name="colour">
              <option value="red">Red</option><option value="blue">Blue</option></select></label>
            <button id="order" type="submit">Order</button>
          </form></body></html>`,
        );
      case '/ordered':
        return html(
          response,
          `<!doctype html><html><head><title>Ordered</title></head><body>
          <p id="thanks">Thank you ${escapeHtml(url.searchParams.get('name') ?? '')}, one ${escapeHtml(
            url.searchParams.get('colour') ?? '',
          )} mug is on its way.</p></body></html>`,
        );
      case '/redirect-internal':
        response.writeHead(302, { location: `${internal}/secret` });
        return response.end();
      case '/redirect-metadata':
        response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
        return response.end();
      case '/hostile-script':
        return html(
          response,
          `<!doctype html><html><head><title>Hostile</title></head><body><p id="status">working</p>
          <script>
            const attempts = [
              fetch('http://169.254.169.254/latest/meta-data/').then(() => 'metadata reached', () => 'metadata refused'),
              fetch('${internal}/secret').then(() => 'internal reached', () => 'internal refused'),
              new Promise((done) => {
                const socket = new WebSocket('ws://localhost:${internalPort()}/socket');
                socket.onopen = () => done('socket open');
                socket.onerror = () => done('socket refused');
                socket.onclose = () => done('socket refused');
              }),
              new Promise((done) => {
                const image = new Image();
                image.onload = () => done('image reached');
                image.onerror = () => done('image refused');
                image.src = 'http://10.0.0.1/pixel.png';
              }),
            ];
            Promise.all(attempts).then((results) => {
              document.getElementById('status').textContent = 'finished: ' + results.join(', ');
            });
          </script></body></html>`,
        );
      case '/huge':
        return html(
          response,
          `<!doctype html><html><head><title>Huge</title></head><body>${Array.from(
            { length: 20_000 },
            (_, index) => `<div>row ${index}</div>`,
          ).join('')}</body></html>`,
        );
      case '/endless':
        return html(
          response,
          '<!doctype html><html><head><title>Endless</title></head><body><script>while (true) {}</script></body></html>',
        );
      case '/post-form':
        return html(
          response,
          `<!doctype html><html><head><title>Post</title></head><body>
          <form action="/posted" method="post"><input id="item" name="item"><button id="send">Send</button></form>
          </body></html>`,
        );
      case '/posted': {
        let body = '';
        request.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        request.on('end', () => {
          const item = new URLSearchParams(body).get('item') ?? '';
          response.writeHead(303, { location: `/received?item=${encodeURIComponent(item)}` }).end();
        });
        return;
      }
      case '/received':
        return html(
          response,
          `<!doctype html><html><head><title>Received</title></head><body><p id="got">Got ${escapeHtml(
            url.searchParams.get('item') ?? '',
          )}</p></body></html>`,
        );
      case '/cookies':
        response.writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          'set-cookie': [
            'flavour=ginger; Path=/; Expires=Wed, 21 Oct 2099 07:28:00 GMT',
            'size=large; Path=/',
          ],
        });
        return response.end(
          '<!doctype html><title>Cookies</title><p id="jar"></p><script>document.getElementById("jar").textContent = document.cookie;</script>',
        );
      case '/download':
        return html(
          response,
          `<!doctype html><html><head><title>Files</title></head><body>
          <a id="file" href="/file.bin" download="file.bin">Get the file</a></body></html>`,
        );
      case '/file.bin':
        response.writeHead(200, {
          'content-type': 'application/octet-stream',
          'content-disposition': 'attachment; filename="file.bin"',
        });
        return response.end(Buffer.alloc(1024, 7));
      case '/to-file':
        return html(
          response,
          `<!doctype html><html><head><title>To file</title></head><body><p>leaving</p>
          <script>location.href = 'file:///etc/passwd';</script></body></html>`,
        );
      default:
        response.writeHead(404).end();
    }
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** Writes the first image of a tool result to test-results/browser/<name>.png and returns its path. */
export function saveScreenshot(message: Message | undefined, name: string): string {
  const part = message?.parts.find((candidate) => candidate.type === 'tool_result');
  const image = part?.type === 'tool_result' ? part.images?.[0] : undefined;
  if (!image) throw new Error(`no image in the tool result for ${name}`);
  mkdirSync(browserScreenshotDir, { recursive: true });
  const extension = image.media_type === 'image/jpeg' ? 'jpg' : 'png';
  const path = join(browserScreenshotDir, `${name}.${extension}`);
  writeFileSync(path, Buffer.from(image.data, 'base64'));
  return path;
}
