// What the browser test does to every screen: photographs it at a small
// phone, a common phone and a tablet, in light and dark, failing if the
// page scrolls sideways; checks it with axe-core; and checks that the page
// can be installed.
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const axeSource = readFileSync(join(here, '..', 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

export const WIDTHS = [[320, 700], [390, 844], [768, 1024]];
export const SCHEMES = ['light', 'dark'];

// shots saves name-WIDTH-SCHEME.png for each size and scheme, and puts the
// page back as it was.
export async function shots(page, name, dir) {
  const size = page.viewportSize();
  const scroll = await page.evaluate(() => window.scrollY);
  try {
    for (const scheme of SCHEMES) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const [width, height] of WIDTHS) {
        await page.setViewportSize({ width, height });
        const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        if (wide > 1) throw new Error(`the ${name} screen scrolls sideways by ${wide} px at ${width} px (${scheme})`);
        await page.screenshot({ path: join(dir, `${name}-${width}-${scheme}.png`), fullPage: true });
      }
    }
  } finally {
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize(size);
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
    await page.emulateMedia({ colorScheme: 'light' });
  }
  const bad = all.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  if (bad.length) {
    throw new Error(`accessibility on the ${name} screen:\n${bad.map((v) => `  ${v.scheme} ${v.impact} ${v.id}: ${v.help} at ${v.targets.join(', ')}`).join('\n')}`);
  }
  return all;
}

// installable checks, from inside the page, that its manifest is linked
// and has what an install needs, and that every icon loads at its size.
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
    for (const k of ['name', 'short_name', 'start_url', 'display', 'icons']) if (!m[k]) return `the manifest lacks ${k}`;
    const sizes = new Set();
    for (const icon of m.icons) {
      const img = new Image();
      img.src = new URL(icon.src, link.href).href;
      try {
        await img.decode();
      } catch {
        return `icon ${icon.src} does not load`;
      }
      if (`${img.naturalWidth}x${img.naturalHeight}` !== icon.sizes) return `icon ${icon.src} is ${img.naturalWidth}x${img.naturalHeight}, not ${icon.sizes}`;
      sizes.add(icon.sizes);
      if ((icon.purpose || '').includes('maskable')) sizes.add('maskable');
    }
    for (const s of ['192x192', '512x512', 'maskable']) if (!sizes.has(s)) return `no ${s} icon`;
    return '';
  });
  if (problem) throw new Error(`the page is not installable: ${problem}`);
}
