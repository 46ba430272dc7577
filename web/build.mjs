// Builds the page into dist/ (or the folder given): app.js bundled by
// esbuild with @noble/ciphers, style.css made of every src/*.css (style.css
// first, then the others by name, so a screen's own sheet such as diff.css
// needs no second <link> and the CSP's style-src 'self' stays one file),
// index.html, the web app manifest and its icons copied (the icons come
// from tools/icons.mjs). The output is deterministic, so a test can compare
// a fresh build with dist/.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
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

// Plain code-point order, not localeCompare, so every machine agrees.
const sheets = readdirSync('src').filter((f) => f.endsWith('.css') && f !== 'style.css').sort();
const css = ['style.css', ...sheets].map((f) => {
  const text = readFileSync(join('src', f), 'utf8');
  return text.endsWith('\n') ? text : `${text}\n`;
});
writeFileSync(join(out, 'style.css'), css.join(''));

for (const f of ['index.html', 'manifest.json', 'icon-192.png', 'icon-512.png', 'icon-maskable-512.png']) copyFileSync(join('src', f), join(out, f));
