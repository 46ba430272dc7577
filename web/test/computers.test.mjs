// Another computer's pairing link, and the routes that name a computer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseComputerLink } from '../src/api.js';
import { at, parse } from '../src/routes.js';

const key = 'A'.repeat(43);

test('another computer\'s link gives its origin, id and key', () => {
  const l = parseComputerLink(` http://192.168.1.20:8123/#abc_DEF-1.${key} `);
  assert.equal(l.base, 'http://192.168.1.20:8123');
  assert.equal(l.id, 'abc_DEF-1');
  assert.equal(l.key.length, 32);
  assert.equal(parseComputerLink(`https://laptop.tail1.ts.net:8123/#x.${key}`).base, 'https://laptop.tail1.ts.net:8123');
  for (const bad of ['', 'not a link', `ftp://a:1/#x.${key}`, `http://a:1/other#x.${key}`, `http://u:p@a:1/#x.${key}`, 'http://a:1/#x.short', `javascript:alert(1)//#x.${key}`]) {
    assert.equal(parseComputerLink(bad), null, bad);
  }
});

test('a route names its computer, and computer 0 keeps the routes it had', () => {
  const p = { id: 't1' };
  assert.equal(at.changes(p), '/p/t1/changes');
  assert.equal(at.changes({ ...p, computer: 2 }), '/c/2/p/t1/changes');
  assert.equal(at.computer(0), '');
  assert.equal(at.computer(3), '/c/3');
  assert.deepEqual(parse('/c/3'), { screen: 'computer', computer: 3 });
  assert.deepEqual(parse('/c/2/p/t1/file/a/b.txt?line=4'), { screen: 'file', id: 't1', path: 'a/b.txt', line: 4, computer: 2 });
  assert.equal(parse('/p/t1/changes').computer, 0);
  for (const bad of ['/c/0', '/c/0/p/t1/changes', '/c/x/p/t1/changes', '/c/1/clone', '/c/1/', '/c/1234']) {
    assert.equal(parse(bad), null, bad);
  }
});
