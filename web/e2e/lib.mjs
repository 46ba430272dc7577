// What the browser test does to every screen: photographs it at a small
// phone, a common phone and a tablet, in light and dark, failing if the
// page scrolls sideways; checks it with axe-core; and checks that the page
// can be installed.
import { readFileSync, existsSync } from 'node:fs';
import { spawn, execFileSync } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const axeSource = readFileSync(join(here, '..', 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

export const WIDTHS = [[320, 700], [390, 844], [768, 1024]];
export const SCHEMES = ['light', 'dark'];

// schemeOf says which colour scheme the page sees now, so a helper can put
// back what it found rather than assume light.
function schemeOf(page) {
  return page.evaluate(() => (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'));
}

// shots saves name-WIDTH-SCHEME.png for each size and scheme, full page,
// failing first if the page scrolls sideways, and puts the page back as it
// was (viewport, colour scheme, scroll).
export async function shots(page, name, dir) {
  const size = page.viewportSize();
  const found = await schemeOf(page);
  const scroll = await page.evaluate(() => window.scrollY);
  try {
    for (const scheme of SCHEMES) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const [width, height] of WIDTHS) {
        await page.setViewportSize({ width, height });
        // The layout viewport (clientWidth), not innerWidth: a mobile
        // browser zooms out to fit a too-wide page, and innerWidth grows
        // with it, so innerWidth would hide the very overflow looked for.
        const wide = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        if (wide > 1) throw new Error(`the ${name} screen scrolls sideways by ${wide} px at ${width} px (${scheme})`);
        await page.screenshot({ path: join(dir, `${name}-${width}-${scheme}.png`), fullPage: true });
      }
    }
  } finally {
    await page.emulateMedia({ colorScheme: found });
    if (size) await page.setViewportSize(size);
    await page.evaluate((y) => window.scrollTo(0, y), scroll);
  }
}

// axe runs axe-core on the page in light and in dark and throws on any
// serious or critical violation (WCAG 2.1 A and AA). The source goes in
// as a script evaluated through the DevTools protocol, which the page's CSP
// (script-src 'self') does not govern, so the page keeps the policy it is
// served with.
export async function axe(page, name) {
  const all = [];
  const was = await schemeOf(page);
  try {
    for (const scheme of SCHEMES) {
      await page.emulateMedia({ colorScheme: scheme });
      if (!(await page.evaluate(() => Boolean(window.axe)))) await page.evaluate(axeSource);
      const found = await page.evaluate(async () => {
        const res = await window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] });
        return res.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
      });
      all.push(...found.map((v) => ({ ...v, scheme })));
    }
  } finally {
    await page.emulateMedia({ colorScheme: was });
  }
  const bad = all.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  if (bad.length) {
    throw new Error(`accessibility on the ${name} screen:\n${bad.map((v) => `  ${v.scheme} ${v.impact} ${v.id}: ${v.help} at ${v.targets.join(', ')}`).join('\n')}`);
  }
  return all;
}

// installable checks, from inside the page, that its manifest is linked
// and has what an install needs, and that every icon loads as a PNG of the
// size it claims (read from the PNG's own header, fetched as the page would).
export async function installable(page) {
  const problem = await page.evaluate(async () => {
    const link = document.querySelector('link[rel="manifest"]');
    if (!link) return 'no manifest link';
    const res = await fetch(link.href);
    if (!res.ok) return `the manifest answered ${res.status}`;
    let m;
    try {
      m = await res.json();
    } catch {
      return 'the manifest is not JSON';
    }
    if (m.name !== 'gatehouse') return `the manifest's name is ${JSON.stringify(m.name)}`;
    for (const k of ['short_name', 'background_color', 'theme_color']) if (typeof m[k] !== 'string' || !m[k]) return `the manifest lacks ${k}`;
    for (const k of ['start_url', 'scope']) if (m[k] !== './') return `the manifest's ${k} is ${JSON.stringify(m[k])}, not "./"`;
    if (m.display !== 'standalone') return `the manifest's display is ${JSON.stringify(m.display)}`;
    if (!Array.isArray(m.icons) || !m.icons.length) return 'the manifest has no icons';
    const have = new Set();
    for (const icon of m.icons) {
      const r = await fetch(new URL(icon.src, link.href));
      if (!r.ok) return `icon ${icon.src} answered ${r.status}`;
      if (r.headers.get('content-type') !== 'image/png' || icon.type !== 'image/png') return `icon ${icon.src} is not served as image/png`;
      const bytes = await r.arrayBuffer();
      const b = new DataView(bytes);
      if (b.byteLength < 24 || b.getUint32(0) !== 0x89504e47 || b.getUint32(12) !== 0x49484452) return `icon ${icon.src} is not a PNG`;
      const size = `${b.getUint32(16)}x${b.getUint32(20)}`;
      if (size !== icon.sizes) return `icon ${icon.src} is ${size}, not ${icon.sizes}`;
      // and it decodes whole, at that size: a good header on bad pixels fails here
      try {
        const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
        if (`${bitmap.width}x${bitmap.height}` !== size) return `icon ${icon.src} decodes at ${bitmap.width}x${bitmap.height}`;
      } catch {
        return `icon ${icon.src} does not decode`;
      }
      for (const purpose of (icon.purpose || 'any').split(' ')) have.add(`${purpose} ${size}`);
    }
    for (const want of ['any 192x192', 'any 512x512', 'maskable 512x512']) if (!have.has(want)) return `no ${want} icon`;
    return '';
  });
  if (problem) throw new Error(`the page is not installable: ${problem}`);
}

// A browser test's run: gatehouse serve on loopback for one repository
// (env adds to the environment, e.g. gh's fake GitHub), phones paired
// through the real flow, failure screenshots, and everything stopped at
// the end. Each step is printed with the seconds since the start. serveArgs
// go to serve after its own (an HTTPS certificate).
export function session({ gatehouse, repo, state, artifacts, env: extra = {}, serveArgs = [] }) {
  const env = { ...process.env, ...extra, GATEHOUSE_HOME: state };
  const gh = (...args) => execFileSync(gatehouse, args, { env, encoding: 'utf8' }).trim();
  const t0 = Date.now();
  const s = {
    gh,
    pages: [],
    errors: [],
    out: '',
    step: (what) => console.log(`${((Date.now() - t0) / 1000).toFixed(1)}s ${what}`),
  };
  let serve;
  let served;
  const start = () => {
    serve = spawn(gatehouse, ['serve', '--listen', 'loopback', '--no-tui', ...serveArgs, repo], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    serve.stdout.on('data', (d) => { s.out += d; });
    serve.stderr.on('data', (d) => { s.out += d; });
    served = new Promise((r) => serve.on('exit', r));
  };
  start();
  // The Go test sends SIGTERM shortly before its own deadline (page_test.go
  // node), whose panic would drop all this script printed: say so and end
  // now. Exiting runs Playwright's exit handler, which kills the browser,
  // and the one below, which kills serve: however node ends, serve must
  // not outlive it.
  process.on('SIGTERM', () => {
    console.error('FAIL: stopped by SIGTERM, the Go test\'s deadline being near: the run hung after the last step printed above');
    console.error('serve said:\n' + s.out);
    process.exit(1);
  });
  process.on('exit', () => serve.kill('SIGKILL'));
  s.stopServe = () => serve.kill('SIGINT');
  // stopped waits for a stopped serve to exit. One still running 30 s after
  // SIGINT is hung: SIGQUIT makes Go print every goroutine's stack into
  // serve's output, which the failure prints, and the step fails saying so
  // (a bare wait hung the whole run until the Go test's deadline, with no
  // clue where).
  s.stopped = async () => {
    const hung = Symbol('hung');
    let timer;
    const outcome = await Promise.race([served, new Promise((r) => { timer = setTimeout(() => r(hung), 30000); })]);
    clearTimeout(timer);
    if (outcome !== hung) return;
    serve.kill('SIGQUIT');
    await served;
    throw new Error('serve did not exit within 30 s of SIGINT; its goroutines are in its output below');
  };
  // restart stops serve, waits for it to end, and starts it again on the
  // same state folder.
  s.restart = async () => {
    serve.kill('SIGINT');
    await s.stopped();
    start();
    await s.started();
  };
  // started waits for serve's control socket.
  s.started = async () => {
    for (let i = 0; !existsSync(join(state, 'control.sock')) || !s.out.includes('is serving'); i++) {
      if (i > 200) throw new Error('serve did not start');
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  // pair opens a phone-sized page and pairs it with grant, accepting every
  // confirmation it asks (dialogs are recorded in page.dialogs); waiting,
  // when given, sees the page while it shows its pair code.
  s.pair = async (browser, grant, waiting) => {
    const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    const page = await ctx.newPage();
    s.pages.push(page);
    page.dialogs = [];
    page.on('dialog', (d) => { page.dialogs.push(d.message()); d.accept(); });
    page.on('pageerror', (e) => s.errors.push(String(e)));
    // The browser's own line for a request that found serve stopped (the
    // restart step) is not the page's error.
    page.on('console', (m) => { if (m.type() === 'error' && !/net::ERR_|Failed to load resource/.test(m.text())) s.errors.push(m.text()); });
    await page.goto(gh('devices', 'link'));
    await page.getByText('Waiting for the computer to allow this device').waitFor();
    page.pairCode = await page.locator('#pair-code').textContent();
    page.pairURL = page.url();
    if (waiting) await waiting(page);
    gh('devices', 'allow', page.pairCode.replace(' ', ''), '--grant', grant, '--wait', '20s');
    return page;
  };
  // end reports a failure (its message first, always: it is the one place
  // a step's error is printed), serve's output and screenshots, then stops
  // the browser and serve.
  s.end = async (browser, err) => {
    if (err !== undefined) {
      process.exitCode = 1;
      console.error(err instanceof Error ? err : new Error(`a step threw ${String(err)}`));
      if (s.errors.length) console.error(`the page logged errors:\n${s.errors.join('\n')}`);
      console.error('serve said:\n' + s.out);
      for (const [i, p] of s.pages.entries()) {
        await p.screenshot({ path: join(artifacts, `failure-${i + 1}.png`), fullPage: true }).catch(() => {});
      }
    }
    try {
      if (browser) await browser.close();
    } finally {
      serve.kill('SIGINT'); // even when close throws: a running serve would keep node from exiting
      await s.stopped().catch((e) => {
        process.exitCode = 1;
        console.error(`${e.message}\nserve said:\n${s.out}`);
      });
    }
  };
  return s;
}

// check fails the run with msg unless ok. It only throws: the script's
// catch hands the error to s.end, which prints it and sets the exit code
// (setting the code here too made end take the failure as already
// reported, so a failed check printed no reason).
export function check(ok, msg) {
  if (!ok) throw new Error(`FAIL: ${msg}`);
}

// within waits for promise for at most ms and fails naming what it waited
// for: the waits Playwright does not bound itself (a new page, a server's
// close) would otherwise hang a run until the Go test's deadline.
export async function within(ms, what, promise) {
  let timer;
  const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms / 1000} s`)), ms); });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
