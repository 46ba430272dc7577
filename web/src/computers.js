// Several computers: this page, served by one computer, pairs with others
// and calls each at its own address (api.js; docs/lan.md, "Several
// computers"). Each is kept in this origin's storage as its own record,
// with its own device id and stored secret; a computer is number 0 (the
// one that served this page) or the number it was given when added, which
// the routes of its screens carry (#/c/<n>/p/...).
import { h } from './dom.js';
import { parseComputerLink } from './api.js';
import { b64encode, b64decode } from './seal.js';
import { show, setTitle, say } from './ui.js';

const listKey = `gatehouse-computers:${location.host}`;

// MIXED is why an HTTPS page cannot reach a computer served over plain
// HTTP: the browser blocks it, so the page says so instead of failing.
export const MIXED = 'This page is served over HTTPS and that computer serves plain HTTP, which the browser does not let an HTTPS page reach. Serve that computer over HTTPS too (gatehouse serve --tls-cert and --tls-key), or open its own page.';

function valid(c) {
  return c && Number.isInteger(c.n) && c.n >= 1 && c.n < 1000 && typeof c.origin === 'string' && /^https?:\/\/[^/?#@]+$/.test(c.origin) &&
    typeof c.deviceId === 'string' && typeof c.stored === 'string' && typeof c.name === 'string';
}

// others lists the other computers this page paired with.
export function others() {
  try {
    const l = JSON.parse(localStorage.getItem(listKey) || 'null');
    if (!l || l.v !== 1 || !Array.isArray(l.computers)) return [];
    return l.computers.filter(valid).map((c) => ({ n: c.n, origin: c.origin, name: c.name, deviceId: c.deviceId, stored: b64decode(c.stored) }));
  } catch {
    return [];
  }
}

function write(list) {
  localStorage.setItem(listKey, JSON.stringify({ v: 1, computers: list.map((c) => ({ n: c.n, origin: c.origin, name: c.name, deviceId: c.deviceId, stored: b64encode(c.stored) })) }));
}

// other is computer n's record, as a device for api.js's Host (base is its
// origin), or null.
export function other(n) {
  const c = others().find((x) => x.n === n);
  return c ? { n: c.n, name: c.name, base: c.origin, deviceId: c.deviceId, stored: c.stored } : null;
}

// keep saves computer n's record: a new one, or a new stored secret.
export function keep(n, origin, name, dev) {
  const list = others().filter((c) => c.n !== n && c.origin !== origin);
  list.push({ n, origin, name, deviceId: dev.deviceId, stored: dev.stored });
  write(list.sort((a, b) => a.n - b.n));
}

// forget drops computer n's record.
export function forget(n) {
  write(others().filter((c) => c.n !== n));
}

// nextNumber is the number a computer added now gets: one that was
// another's before would send an old link to the wrong computer, so it
// is one past the highest kept.
function nextNumber(origin) {
  const list = others();
  const same = list.find((c) => c.origin === origin);
  return same ? same.n : list.reduce((m, c) => Math.max(m, c.n), 0) + 1;
}

// addComputer draws the screen that pairs another computer by its link:
// pairWith(link, n, name) runs the pairing (it shows the code to compare)
// and opens the computer; its refusal is said beside the button.
export function addComputer(pairWith) {
  setTitle('Add a computer', true);
  const input = h('input', { id: 'computer-link', type: 'url', inputmode: 'url', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'computer-help' });
  const submit = async (ev) => {
    ev.preventDefault();
    const link = parseComputerLink(input.value);
    if (!link) return say('That is not a gatehouse pairing link. It looks like http://address:port/#… and is shown by gatehouse serve on the other computer.');
    if (link.base === location.origin) return say('That is the link of the computer that served this page, which this page is paired with already.');
    if (location.protocol === 'https:' && link.base.startsWith('http:')) return say(MIXED);
    return pairWith(link, nextNumber(link.base), new URL(link.base).host);
  };
  show(h('h2', {}, 'Add a computer'),
    h('form', { class: 'stack', onsubmit: submit },
      h('label', { for: 'computer-link' }, 'The other computer\'s pairing link'), input,
      h('p', { id: 'computer-help', class: 'muted' },
        'On the other computer, gatehouse serve shows its pairing link and QR code (gatehouse devices link prints it). Copy the link here. That computer then shows a code beside the request: allow it there only if it is the code this page shows.'),
      h('div', { class: 'row actions' }, h('button', { type: 'submit' }, 'Pair with this computer'))));
}
