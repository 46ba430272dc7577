// Writes the page's icons (src/icon-192.png, src/icon-512.png and the
// maskable src/icon-maskable-512.png): a white gateway arch on the page's
// accent blue, drawn here so the PNGs are reproducible byte for byte
// (node tools/icons.mjs). The glyph stays inside the middle 60%, the safe
// zone a maskable icon's mask never cuts.
import { deflateSync, crc32 } from 'node:zlib';
import { writeFileSync } from 'node:fs';

const BLUE = [0x0b, 0x5c, 0xd5];
const WHITE = [255, 255, 255];

function inArch(x, y, r, half, base) {
  // a rectangle below base and a half disc above it, centred at x = .5
  if (y >= base) return Math.abs(x - 0.5) <= half;
  return (x - 0.5) ** 2 + (y - base) ** 2 <= r * r;
}

// cover says how much of pixel (px, py) of an n-pixel icon the glyph
// covers, from 4 x 4 samples.
function cover(px, py, n) {
  let hit = 0;
  for (let sy = 0; sy < 4; sy++) {
    for (let sx = 0; sx < 4; sx++) {
      const x = (px + (sx + 0.5) / 4) / n;
      const y = (py + (sy + 0.5) / 4) / n;
      const outer = y <= 0.74 && inArch(x, y, 0.21, 0.21, 0.47);
      const door = y <= 0.74 && inArch(x, y, 0.085, 0.085, 0.52);
      if (outer && !door) hit++;
    }
  }
  return hit / 16;
}

function png(n, rounded) {
  const rows = [];
  for (let y = 0; y < n; y++) {
    const row = Buffer.alloc(1 + n * 4);
    for (let x = 0; x < n; x++) {
      const c = cover(x, y, n);
      let alpha = 255;
      if (rounded) {
        // rounded corners for the plain icon; the maskable one is full bleed
        const r = n * 0.18;
        const dx = Math.max(r - x - 0.5, x + 0.5 - (n - r), 0);
        const dy = Math.max(r - y - 0.5, y + 0.5 - (n - r), 0);
        alpha = Math.round(255 * Math.min(1, Math.max(0, r - Math.hypot(dx, dy) + 0.5)));
      }
      for (let k = 0; k < 3; k++) row[1 + x * 4 + k] = Math.round(BLUE[k] * (1 - c) + WHITE[k] * c);
      row[1 + x * 4 + 3] = alpha;
    }
    rows.push(row);
  }
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(td) >>> 0);
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(n, 0);
  ihdr.writeUInt32BE(n, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.concat(rows), { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

writeFileSync(new URL('../src/icon-192.png', import.meta.url), png(192, true));
writeFileSync(new URL('../src/icon-512.png', import.meta.url), png(512, true));
writeFileSync(new URL('../src/icon-maskable-512.png', import.meta.url), png(512, false));
