package fsguard

import (
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
)

// pricePNG derives from image/png (reader.go):
//
//   - the picture, allocated whole first: bytes a pixel by colour type and
//     depth, where grey and truecolour with a tRNS chunk become NRGBA or
//     NRGBA64 (readImagePass);
//   - interlaced: each of Adam7's seven passes is allocated as a picture
//     of its own and merged in (decode, readImagePass);
//   - two rows of filter state a pass: 1 + bits a pixel × width / 8.
//
// All of it follows from IHDR and whether a tRNS chunk comes before the
// first IDAT (the decoder refuses one after).
//
// Work: every decompressed byte is inflated and unfiltered, every pixel
// converted (and merged, when interlaced). The decoder stops reading the
// stream at the last row, so the data it inflates is what the header says.
func pricePNG(unsafeData []byte) (priced, error) {
	h, err := readPNGHead(unsafeData)
	if err != nil {
		return priced{}, err
	}
	return h.price()
}

// pngHead is a PNG as its decoder is to read it: head, written by
// gatehouse, holds the signature and the chunks before the first IDAT that
// the decoder acts on; rest is the file from that IDAT on, as it is.
type pngHead struct {
	head, rest       []byte
	width, height    int
	depth, colorType byte
	interlaced, trns bool
}

// price is what decoding h costs, once the decoder's own DecodeConfig of
// h has agreed with IHDR on size and colour model.
func (h pngHead) price() (priced, error) {
	p := priced{head: h.head, rest: h.rest}
	cfg, err := png.DecodeConfig(p.stream())
	if err != nil || cfg.Width != h.width || cfg.Height != h.height || !h.hasModel(cfg.ColorModel) {
		return priced{}, errHeader
	}
	bits, pixelBytes := h.pixel()
	pixels := int64(h.width) * int64(h.height)
	p.cfg = cfg
	p.cost = decodeCost{bytes: heapBytes(pixelBytes*pixels) + decoderOverhead, work: pixels}
	for _, pass := range pngPasses(h.width, h.height, h.interlaced) {
		row := 1 + (bits*int64(pass.X)+7)/8
		p.cost.bytes += 2 * heapBytes(row)
		p.cost.work += row * int64(pass.Y)
		if h.interlaced {
			p.cost.bytes += heapBytes(pixelBytes * int64(pass.X) * int64(pass.Y))
			p.cost.work += int64(pass.X) * int64(pass.Y)
		}
	}
	return p, nil
}

// pngHeadChunks are the chunks before the first IDAT that the decoder acts
// on, so they are written into the head, each with its reason. The decoder
// reads every other chunk by its length and ignores it, so the head leaves
// them out. Each may occur once (the decoder refuses a second), and PLTE
// and tRNS hold at most 256 entries, so the head is under 1.1 KB.
var pngHeadChunks = map[string]string{
	"IHDR": "size, depth, colour type and interlacing: what is allocated",
	"PLTE": "the palette, used to decode",
	"tRNS": "transparency, which makes grey and truecolour NRGBA",
}

// readPNGHead walks the chunks up to the first IDAT as parseChunk does,
// each skipped by its length, and writes the head the decoder is to read:
// the signature and the chunks of pngHeadChunks, IHDR first. Whether this
// walk matches the decoder's on the file does not matter for the cost:
// the decoder reads the head, not the file's own header.
func readPNGHead(unsafeData []byte) (pngHead, error) {
	data := unsafeData
	if len(data) < 8 || string(data[:8]) != pngSignature {
		return pngHead{}, errHeader
	}
	h := pngHead{head: []byte(pngSignature)}
	seen := map[string]bool{}
	for i := 8; i+8 <= len(data); {
		n := int64(binary.BigEndian.Uint32(data[i:]))
		typ, body := data[i+4:i+8], i+8
		if n > int64(len(data)-body-4) {
			return pngHead{}, errHeader
		}
		end := body + int(n) + 4 // after the CRC
		switch kept := pngHeadChunk(typ); {
		case string(typ) == "IDAT" && seen["IHDR"]:
			h.rest = data[i:]
			return h, nil
		case kept == "":
			// read by its length and ignored
		case seen[kept] || n > 3*256 || kept == "IHDR" && n != 13 || kept != "IHDR" && !seen["IHDR"]:
			return pngHead{}, errHeader // a second, a wrong length, or before IHDR
		default:
			seen[kept] = true
			h.head = append(h.head, data[i:end]...)
			if kept == "IHDR" {
				h.readIHDR(data[body:end])
			}
			h.trns = h.trns || kept == "tRNS"
		}
		i = end
	}
	return pngHead{}, errHeader
}

// pngHeadChunk is typ's name in pngHeadChunks, or "".
func pngHeadChunk(typ []byte) string {
	for name := range pngHeadChunks {
		if string(typ) == name {
			return name
		}
	}
	return ""
}

const pngSignature = "\x89PNG\r\n\x1a\n"

// readIHDR takes the fields of an IHDR body (with its CRC after).
func (h *pngHead) readIHDR(b []byte) {
	h.width, h.height = int(binary.BigEndian.Uint32(b)), int(binary.BigEndian.Uint32(b[4:]))
	h.depth, h.colorType, h.interlaced = b[8], b[9], b[12] == 1
}

// pixel is the bits a pixel has in the file and the bytes it takes in
// the picture the decoder returns (readImagePass's switch on cb).
func (h pngHead) pixel() (bits, bytes int64) {
	d := int64(h.depth)
	switch h.colorType {
	case 0: // grey: Gray or Gray16, NRGBA or NRGBA64 with tRNS
		bits, bytes = d, max(1, d/8)
		if h.trns {
			bytes *= 4
		}
	case 2: // truecolour: RGBA or RGBA64, NRGBA or NRGBA64 with tRNS
		bits, bytes = 3*d, 4*max(1, d/8)
	case 3: // paletted
		bits, bytes = d, 1
	case 4: // grey with alpha: NRGBA or NRGBA64
		bits, bytes = 2*d, 4*max(1, d/8)
	default: // truecolour with alpha: NRGBA or NRGBA64
		bits, bytes = 4*d, 4*max(1, d/8)
	}
	return bits, bytes
}

// hasModel says whether m is the colour model png.DecodeConfig gives for
// h's depth and colour type, which is what pixel reads.
func (h pngHead) hasModel(m color.Model) bool {
	if _, ok := m.(color.Palette); ok {
		return h.colorType == 3
	}
	wide := h.depth == 16
	want := map[byte]color.Model{0: color.GrayModel, 2: color.RGBAModel, 4: color.NRGBAModel, 6: color.NRGBAModel}
	if wide {
		want = map[byte]color.Model{0: color.Gray16Model, 2: color.RGBA64Model, 4: color.NRGBA64Model, 6: color.NRGBA64Model}
	}
	w, ok := want[h.colorType]
	return ok && w == m && (wide || h.depth == 8 || h.colorType == 0)
}

// pngPasses are the sizes of the passes the decoder reads: the whole
// picture, or Adam7's seven (interlacing in reader.go), leaving out the
// empty ones it skips.
func pngPasses(width, height int, interlaced bool) []image.Point {
	if !interlaced {
		return []image.Point{{width, height}}
	}
	var out []image.Point
	for _, p := range [7][4]int{{8, 8, 0, 0}, {8, 8, 4, 0}, {4, 8, 0, 4}, {4, 4, 2, 0}, {2, 4, 0, 2}, {2, 2, 1, 0}, {1, 2, 0, 1}} {
		w, h := (width-p[2]+p[0]-1)/p[0], (height-p[3]+p[1]-1)/p[1]
		if w > 0 && h > 0 {
			out = append(out, image.Point{w, h})
		}
	}
	return out
}
