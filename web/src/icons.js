// The page's few icons, drawn as inline SVG in the text's colour: emoji
// (📁 📄 🔒) and symbols such as ✓ and ✗ come from the device's fonts, and
// a phone or a desktop without an emoji font drew them as empty boxes.
// Each is built with createElementNS from the fixed shapes below (nothing
// from a repository goes in), uses only presentation attributes (the
// page's CSP blocks style attributes), and is either hidden from screen
// readers (decorative, beside its word) or an image with a label.

const NS = 'http://www.w3.org/2000/svg';

// Shapes on a 24 × 24 grid, stroked with currentColor unless filled.
const SHAPES = {
  folder: [['path', { d: 'M3 6.5A1.5 1.5 0 0 1 4.5 5H9l2 2h8.5A1.5 1.5 0 0 1 21 8.5v9a1.5 1.5 0 0 1-1.5 1.5h-15A1.5 1.5 0 0 1 3 17.5z' }]],
  file: [['path', { d: 'M6 3h8l4 4v14H6z' }], ['path', { d: 'M14 3v4h4' }]],
  lock: [['rect', { x: 5, y: 11, width: 14, height: 10, rx: 2 }], ['path', { d: 'M8 11V8a4 4 0 0 1 8 0v3' }]],
  check: [['path', { d: 'M5 12.5l4.5 4.5L19 7' }]],
  cross: [['path', { d: 'M6 6l12 12M18 6L6 18' }]],
  dot: [['circle', { cx: 12, cy: 12, r: 4, fill: 'currentColor' }]],
  ring: [['circle', { cx: 12, cy: 12, r: 4 }]],
  back: [['path', { d: 'M15 5l-7 7 7 7' }]],
};

// icon draws one by name. With a label it is an image with that label
// (role=img); without, it is decoration beside words that say the same and
// is hidden from screen readers.
export function icon(name, label) {
  const svg = document.createElementNS(NS, 'svg');
  const attrs = { viewBox: '0 0 24 24', width: 16, height: 16, fill: 'none', stroke: 'currentColor', 'stroke-width': 2,
    'stroke-linecap': 'round', 'stroke-linejoin': 'round', class: `icon-svg icon-${name}`, focusable: 'false' };
  for (const [k, v] of Object.entries(attrs)) svg.setAttribute(k, String(v));
  if (label) {
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', label);
  } else {
    svg.setAttribute('aria-hidden', 'true');
  }
  for (const [tag, a] of SHAPES[name]) {
    const el = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(a)) el.setAttribute(k, String(v));
    svg.append(el);
  }
  return svg;
}
