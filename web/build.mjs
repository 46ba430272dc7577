// Builds the page into dist/ (or the folder given): app.js bundled by
// esbuild with @noble/ciphers, index.html, style.css, the web app manifest
// and its icons copied (the icons come from tools/icons.mjs). The output
// is deterministic, so a test can compare a fresh build with dist/.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

const out = process.argv[2] || 'dist';
mkdirSync(out, { recursive: true });
await build({
  entryPoints: ['src/main.js'],
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2020', 'safari15', 'chrome90', 'firefox90'],
  legalComments: 'eof',
  outfile: join(out, 'app.js'),
  logLevel: 'warning',
});
for (const f of ['index.html', 'style.css', 'manifest.json', 'icon-192.png', 'icon-512.png', 'icon-maskable-512.png']) copyFileSync(join('src', f), join(out, f));
