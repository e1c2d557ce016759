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

/** What the hostile site serves as its 10 MB resources (test/tools/browser-hostile-pages.int.test.ts). */
export const bigResourceBytes = 10 * 1024 * 1024;
const bigResource = Buffer.alloc(bigResourceBytes, 'a');

/**
 * Pages that attack the worker rather than the network: windows, memory, WebRTC, redirects to pages only a
 * browser has, and answers of unbounded size. `udpPort` is a listener on 127.0.0.1 that must hear nothing;
 * `bigRequests` records when each 10 MB resource was asked for.
 */
export function hostileSite(options: { udpPort: () => number; bigRequests: number[] }): Handler {
  // Base64, so that the URL quoted in an error does not hold the words the page would show.
  const dataPage = `data:text/html;base64,${Buffer.from(
    '<title>data page</title><p>data page ran</p><script>document.title="data script ran"</script>',
  ).toString('base64')}`;
  return (request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    switch (url.pathname) {
      case '/opens-windows':
        return html(
          response,
          `<!doctype html><html><head><title>Windows</title></head><body><h1>A page with windows</h1>
          <a id="blank-link" href="/link-target" target="_blank">a new window</a>
          <form id="blank-form" action="/form-target" target="_blank"><input name="q" value="1">
            <button type="submit">Send</button></form>
          <script>window.open('/window-opened');</script></body></html>`,
        );
      case '/hog':
        // 40 loops fetching 10 MB each, for as long as the page lives; "done" shows after 6 s.
        return html(
          response,
          `<!doctype html><html><head><title>Hog</title></head><body><p id="count">0</p><script>
            let loaded = 0;
            async function loop(lane) {
              for (let round = 0; ; round += 1) {
                try { await (await fetch('/big?' + lane + '-' + round)).arrayBuffer(); loaded += 1; } catch {}
                document.getElementById('count').textContent = String(loaded);
              }
            }
            for (let lane = 0; lane < 40; lane += 1) loop(lane);
            setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<p>done</p>'), 6000);
          </script></body></html>`,
        );
      case '/big':
        options.bigRequests.push(Date.now());
        response.writeHead(200, { 'content-type': 'application/octet-stream' });
        return response.end(bigResource);
      case '/webrtc': {
        // Every ICE server on the UDP listener's port, over UDP and TCP; from the page, from an iframe made
        // and used at once (before any script of ours could run in it), and from a srcdoc iframe.
        const servers = JSON.stringify([
          { urls: `stun:127.0.0.1:${options.udpPort()}` },
          { urls: `turn:127.0.0.1:${options.udpPort()}?transport=udp`, username: 'u', credential: 'c' },
          { urls: `turn:127.0.0.1:${options.udpPort()}?transport=tcp`, username: 'u', credential: 'c' },
        ]);
        const gather = `function gather(Peer, servers) {
            return new Promise((done) => {
              const found = [];
              const peer = new Peer({ iceServers: servers });
              peer.createDataChannel('probe');
              peer.onicecandidate = (event) => {
                if (event.candidate) found.push(event.candidate.candidate);
                else done(found);
              };
              peer.createOffer().then((offer) => peer.setLocalDescription(offer));
              // An interval, not a timeout: between browser calls the page's scripts are suspended, and a
              // timer that falls due then is dropped; an interval fires again once they run.
              const start = Date.now();
              setInterval(() => Date.now() - start > 4000 && done(found), 250);
            });
          }`;
        return html(
          response,
          `<!doctype html><html><head><title>WebRTC</title></head><body><p id="status">gathering</p>
          <iframe id="srcdoc" srcdoc="<script>${gather.replaceAll('"', '&quot;')}; parent.fromSrcdoc = gather(RTCPeerConnection, ${servers.replaceAll('"', '&quot;')});</script>"></iframe>
          <script>${gather}
            const frame = document.createElement('iframe');
            document.body.appendChild(frame);
            const servers = ${servers};
            Promise.all([
              gather(RTCPeerConnection, servers),
              gather(frame.contentWindow.RTCPeerConnection, servers),
              // An interval here too: a 500 ms timeout falling due between the open and the wait call (a
              // loaded machine takes longer than that over the step between them) was dropped, and the
              // page said 'gathering' for ever.
              new Promise((done) => {
                const since = Date.now();
                setInterval(() => Date.now() - since > 500 && done(), 100);
              }).then(() => window.fromSrcdoc ?? []),
            ]).then((lists) => {
              document.getElementById('status').textContent = 'gathered ' + lists.flat().length + ' candidates';
            });
          </script></body></html>`,
        );
      }
      case '/redirect-chrome':
        response.writeHead(302, { location: 'chrome://version' });
        return response.end();
      case '/redirect-data':
        response.writeHead(302, { location: dataPage });
        return response.end();
      case '/redirect-twice-to-data':
        response.writeHead(302, { location: '/redirect-data' });
        return response.end();
      case '/link-to-redirect-chrome':
        return html(
          response,
          `<!doctype html><title>Links</title><a id="chrome" href="/redirect-chrome">version</a>`,
        );
      case '/location-data':
        return html(
          response,
          `<!doctype html><title>Leaving</title><script>location = ${JSON.stringify(dataPage)};</script>`,
        );
      case '/meta-data':
        return html(
          response,
          `<!doctype html><title>Refresh</title><meta http-equiv="refresh" content="0;url=${escapeHtml(dataPage)}">`,
        );
      case '/to-blob':
        return html(
          response,
          `<!doctype html><title>Blob</title><script>
            location = URL.createObjectURL(new Blob(['<title>blob page</title><p>blob page ran</p>'], { type: 'text/html' }));
          </script>`,
        );
      case '/huge-answers':
        // A title of 5,000,000 characters behind getters the page redefined, a URL of 1,000,000, an option
        // value of 1,000,000, and a download whose URL is 15,000 characters (what the test server accepts)
        // and whose fetch is refused.
        return html(
          response,
          `<!doctype html><html><head><title>x</title></head><body>
          <select id="pick"><option value="a">A</option><option value="${'v'.repeat(1_000_000)}">B</option></select>
          <a id="download" href="/download-refused?${'d'.repeat(15_000)}" download="file.bin">file</a>
          <script>
            document.title = 'T'.repeat(5000000);
            const realTitle = Object.getOwnPropertyDescriptor(Document.prototype, 'title');
            Object.defineProperty(Document.prototype, 'title', { get() { return realTitle.get.call(this) + realTitle.get.call(this); } });
            String.prototype.slice = function () { return String(this); };
            history.replaceState(null, '', '/huge-answers?' + 'u'.repeat(1000000));
          </script></body></html>`,
        );
      case '/download-refused':
        // Chromium's request gets the file; the worker's own fetch of it is redirected where it may not go.
        if ((request.headers['user-agent'] ?? '').includes('Chrome')) {
          response.writeHead(200, {
            'content-type': 'application/octet-stream',
            'content-disposition': 'attachment; filename="file.bin"',
          });
          return response.end('file');
        }
        response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
        return response.end();
      default:
        response.writeHead(404).end();
    }
  };
}
