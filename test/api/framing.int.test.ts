import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWithBrowser, launchBrowser } from '../helpers/browser.js';
import { html, type PageServer, startPageServer } from '../helpers/browser-pages.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { ApiHarness } from './api-harness.js';
import { rawRequest } from './raw-http.js';

// Clickjacking (issue 31, point 11): another site's page frames the API's pages (Swagger UI at /docs, whose
// "Execute" buttons reach every route, and the console) under a decoy. Every answer of the API says it may
// not be framed: X-Frame-Options DENY and frame-ancestors 'none' in its Content-Security-Policy.

const framedPaths = ['/docs', '/docs/static/index.html', '/console', '/admin/queues', '/openapi.json'];

describe('every answer of the API forbids framing (raw HTTP)', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await ApiHarness.start({
      script: { default: { text: 'ok' } },
      worker: false,
      api: { admin_queues: true },
    });
  }, 60_000);
  afterAll(async () => {
    await api?.close();
  });

  it('HTML pages, JSON answers, errors and redirects carry X-Frame-Options DENY and frame-ancestors none', async () => {
    const paths = [
      ...framedPaths,
      '/docs/',
      '/docs/json',
      '/docs/static/swagger-initializer.js',
      '/v1/agents',
      '/v1/runs/run_unknown',
      '/no/such/route',
      '/healthz',
    ];
    for (const path of paths) {
      const answer = await rawRequest(api.url, { method: 'GET', path });
      const policy = String(answer.headers['content-security-policy'] ?? '');
      const framing = policy
        .split(';')
        .map((directive) => directive.trim())
        .filter((directive) => directive.startsWith('frame-ancestors'));
      expect({ path, xfo: answer.headers['x-frame-options'], framing }).toEqual({
        path,
        xfo: 'DENY',
        framing: ["frame-ancestors 'none'"],
      });
    }
    // Swagger UI's page keeps a policy of its own besides (scripts from here only).
    const page = await rawRequest(api.url, { method: 'GET', path: '/docs' });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
  });
});

describeWithBrowser('framing by another site, in Chromium', () => {
  let api: ApiHarness;
  let browser: Browser;
  let pages: PageServer;

  beforeAll(async () => {
    api = await ApiHarness.start({
      script: { default: { text: 'ok' } },
      worker: false,
      api: { admin_queues: true },
    });
    browser = await launchBrowser();
    pages = await startPageServer((_request, response) =>
      html(
        response,
        `<!doctype html><title>win a prize</title>${framedPaths
          .map((path) => `<iframe src="${api.url}${path}" width="800" height="300"></iframe>`)
          .join('')}`,
      ),
    );
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await pages?.close();
    await api?.close();
  });

  it("/docs, the console and the queue board do not load in another site's frame", async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const blocked: string[] = [];
      page.on('console', (message) => {
        if (/frame-ancestors|X-Frame-Options/i.test(message.text())) blocked.push(message.text());
      });
      await page.goto(`${pages.origin}/prize`, { waitUntil: 'load' });
      // Chromium replaces a refused frame's document with its error page; none of the API's content runs.
      await waitFor(
        async () => page.frames().filter((frame) => frame.url().startsWith('chrome-error://')).length === 5,
        15_000,
        `every frame refused: ${page
          .frames()
          .map((frame) => frame.url())
          .join(', ')}`,
      );
      const loaded = page.frames().filter((frame) => frame.url().startsWith(api.url));
      expect(loaded.map((frame) => frame.url())).toEqual([]);
      expect(blocked.length).toBeGreaterThanOrEqual(framedPaths.length);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('/docs still works as a page of its own: Swagger UI draws every route under its policy', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const violations: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
      });
      await page.goto(`${api.url}/docs`, { waitUntil: 'load' });
      await page.locator('.opblock-summary-path').first().waitFor({ timeout: 30_000 });
      const paths = await page.locator('.opblock-summary-path').allTextContents();
      expect(paths.map((path) => path.replace(/\u200b/g, ''))).toContain('/v1/runs/{id}/cancel');
      expect(violations).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
