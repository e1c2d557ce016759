// Builds the web console (src/console, Preact TSX) into dist/console: index.html, app.js and app.css, the
// three files the API serves at /console (src/api/console-routes.ts). One bundle, no CDN and nothing fetched
// from elsewhere at run time; the page's Content-Security-Policy allows only these files ('self'), so the
// HTML has no inline script or style.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';

const root = join(import.meta.dirname, '..');
const out = join(root, 'dist/console');
mkdirSync(out, { recursive: true });

// zod's namespace export carries every locale's error messages (about half of the bundle); the console
// shows the API's messages, never zod's, so it keeps English (the one zod configures itself with) only.
const englishOnlyZodLocales = {
  name: 'english-only-zod-locales',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
        ? { path: join(dirname(args.importer), '../locales/index.js'), namespace: 'zod-locales' }
        : undefined,
    );
    pluginBuild.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: dirname(args.path),
      loader: 'js',
    }));
  },
};

const started = Date.now();
await build({
  entryPoints: { app: join(root, 'src/console/main.tsx') },
  outdir: out,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  legalComments: 'none',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  tsconfig: join(root, 'src/console/tsconfig.json'),
  define: { 'process.env.NODE_ENV': '"production"' },
  plugins: [englishOnlyZodLocales],
  logLevel: 'warning',
});

const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="referrer" content="no-referrer">
    <title>Ratchet console</title>
    <link rel="icon" href="data:,">
    <link rel="stylesheet" href="/console/assets/app.css">
    <script type="module" src="/console/assets/app.js"></script>
  </head>
  <body>
    <div id="app"><noscript>The Ratchet console needs JavaScript.</noscript></div>
  </body>
</html>
`;
writeFileSync(join(out, 'index.html'), html);
console.log(`ratchet console: built dist/console in ${Date.now() - started} ms`);
