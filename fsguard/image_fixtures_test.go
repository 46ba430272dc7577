package fsguard

import (
	"bytes"
	"compress/flate"
	"compress/lzw"
	"encoding/binary"
	"hash/crc32"
)

// The pictures the thumbnail tests decode, written here rather than by a
// tool: Go encodes neither progressive nor CMYK JPEGs, nor interlaced PNGs
// or GIFs, and what an attacker sends is exactly such a file with nothing
// in it. Every picture is blank (all coefficients or samples zero), which
// is what makes a bomb small on disk; the decoders allocate the same for a
// blank picture as for a photograph of its size.

// jpegComp is one component of a JPEG frame: its identifier and sampling.
type jpegComp struct{ id, h, v byte }

// jpegSpec describes a blank JPEG.
type jpegSpec struct {
	w, h        int
	progressive bool
	comps       []jpegComp
	adobe       int  // the APP14 transform byte; -1 writes no APP14
	jfif        bool // writes a JFIF APP0
	acScans     int  // progressive: AC scans per component after the DC scan
}

var (
	grayComps  = []jpegComp{{1, 1, 1}}
	ycc420     = []jpegComp{{1, 2, 2}, {2, 1, 1}, {3, 1, 1}}
	ycc444     = []jpegComp{{1, 1, 1}, {2, 1, 1}, {3, 1, 1}}
	rgbComps   = []jpegComp{{'R', 1, 1}, {'G', 1, 1}, {'B', 1, 1}}
	cmykComps  = []jpegComp{{1, 1, 1}, {2, 1, 1}, {3, 1, 1}, {4, 1, 1}}
	ycckComps  = []jpegComp{{1, 2, 2}, {2, 1, 1}, {3, 1, 1}, {4, 2, 2}}
	cmykAdobe  = 0 // APP14 transform: CMYK (or RGB for three components)
	ycckAdobe  = 2
	noAdobe    = -1
	ycbcrAdobe = 1
)

// blankJPEG writes s as a JPEG whose every coefficient is zero. Its one
// DC table holds the single symbol 0 (code "0"); its AC table the end-of-
// band symbols 0x00, 0x10 … 0xE0 (four-bit codes 0000 … 1110), so a
// baseline block is five zero bits and a progressive AC scan is one
// end-of-band run per 32,767 blocks.
func blankJPEG(s jpegSpec) []byte {
	var out bytes.Buffer
	seg := func(marker byte, payload []byte) {
		out.Write([]byte{0xff, marker})
		binary.Write(&out, binary.BigEndian, uint16(len(payload)+2))
		out.Write(payload)
	}
	out.Write([]byte{0xff, 0xd8})
	if s.jfif {
		seg(0xe0, []byte("JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"))
	}
	if s.adobe >= 0 {
		seg(0xee, append([]byte("Adobe\x00\x64\x00\x00\x00\x00"), byte(s.adobe)))
	}
	seg(0xdb, append([]byte{0}, bytes.Repeat([]byte{1}, 64)...))
	sof := []byte{8, byte(s.h >> 8), byte(s.h), byte(s.w >> 8), byte(s.w), byte(len(s.comps))}
	for _, c := range s.comps {
		sof = append(sof, c.id, c.h<<4|c.v, 0)
	}
	seg(map[bool]byte{false: 0xc0, true: 0xc2}[s.progressive], sof)
	dc := append([]byte{0x00, 1}, make([]byte, 15)...)
	dc = append(dc, 0)
	ac := append([]byte{0x10, 0, 0, 0, 15}, make([]byte, 12)...)
	for k := range 15 {
		ac = append(ac, byte(k<<4))
	}
	seg(0xc4, append(dc, ac...))

	h0, v0 := int(s.comps[0].h), int(s.comps[0].v)
	if len(s.comps) == 1 {
		h0, v0 = 1, 1
	}
	mxx, myy := (s.w+8*h0-1)/(8*h0), (s.h+8*v0-1)/(8*v0)
	var mcuBlocks int
	for _, c := range s.comps {
		mcuBlocks += int(c.h) * int(c.v)
	}
	if len(s.comps) == 1 {
		mcuBlocks = 1
	}
	sos := func(comps []jpegComp, ss, se byte) {
		p := []byte{byte(len(comps))}
		for _, c := range comps {
			p = append(p, c.id, 0x00)
		}
		seg(0xda, append(p, ss, se, 0))
	}
	var bw bitWriter
	if !s.progressive {
		sos(s.comps, 0, 63)
		bw.zeros(mxx * myy * mcuBlocks * 5)
		out.Write(bw.flush())
		out.Write([]byte{0xff, 0xd9})
		return out.Bytes()
	}
	sos(s.comps, 0, 0)
	bw.zeros(mxx * myy * mcuBlocks)
	out.Write(bw.flush())
	for range s.acScans {
		for _, c := range s.comps {
			// The blocks an AC scan of one component codes (scan.go skips
			// those past the picture's own edge, measured in luma pixels).
			ch, cv := int(c.h), int(c.v)
			if len(s.comps) == 1 {
				ch, cv = 1, 1
			}
			bx, by := min(mxx*ch, (s.w+7)/8), min(myy*cv, (s.h+7)/8)
			sos([]jpegComp{c}, 1, 63)
			for n := bx * by; n > 0; {
				run := min(n, 32767)
				k := 0
				for run>>(k+1) != 0 {
					k++
				}
				bw.bits(uint32(k), 4)
				bw.bits(uint32(run-1<<k), k)
				n -= run
			}
			out.Write(bw.flush())
		}
	}
	out.Write([]byte{0xff, 0xd9})
	return out.Bytes()
}

// bitWriter packs entropy-coded bits, stuffing a zero after each 0xff.
type bitWriter struct {
	out  []byte
	acc  uint32
	nacc int
}

func (b *bitWriter) bits(v uint32, n int) {
	for i := n - 1; i >= 0; i-- {
		b.acc = b.acc<<1 | v>>i&1
		if b.nacc++; b.nacc == 8 {
			b.byte(byte(b.acc))
			b.acc, b.nacc = 0, 0
		}
	}
}

func (b *bitWriter) zeros(n int) {
	for ; n > 0 && b.nacc != 0; n-- {
		b.bits(0, 1)
	}
	b.out = append(b.out, make([]byte, n/8)...)
	b.bits(0, n%8)
}

func (b *bitWriter) byte(c byte) {
	b.out = append(b.out, c)
	if c == 0xff {
		b.out = append(b.out, 0)
	}
}

// flush pads the last byte with ones, as the standard says, and returns
// the scan's bytes.
func (b *bitWriter) flush() []byte {
	if b.nacc > 0 {
		b.bits(1<<(8-b.nacc)-1, 8-b.nacc)
	}
	out := b.out
	*b = bitWriter{}
	return out
}

// pngSpec describes a blank PNG.
type pngSpec struct {
	w, h       int
	depth, ct  byte // bit depth and colour type as IHDR has them
	interlaced bool
	trns       bool // writes a tRNS chunk
	noData     bool // writes an IDAT of no rows: the header, priced quickly; the decoder allocates the picture and fails
}

// blankPNG writes s as a PNG whose every sample is zero, each pass (one, or
// Adam7's seven) as filter-0 rows.
func blankPNG(s pngSpec) []byte {
	var out bytes.Buffer
	chunk := func(typ string, data []byte) {
		binary.Write(&out, binary.BigEndian, uint32(len(data)))
		out.WriteString(typ)
		out.Write(data)
		binary.Write(&out, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	out.WriteString(pngSignature)
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(s.w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(s.h))
	ihdr = append(ihdr, s.depth, s.ct, 0, 0, map[bool]byte{false: 0, true: 1}[s.interlaced])
	chunk("IHDR", ihdr)
	if s.ct == 3 {
		chunk("PLTE", make([]byte, 3<<s.depth))
	}
	if s.trns {
		chunk("tRNS", make([]byte, map[byte]int{0: 2, 2: 6, 3: 1}[s.ct]))
	}
	bits := int(s.depth) * map[byte]int{0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[s.ct]
	var size int // every row of every pass: its filter byte (0) and samples
	for _, p := range pngPasses(s.w, s.h, s.interlaced) {
		size += p.Y * (1 + (bits*p.X+7)/8)
	}
	if s.noData {
		size = 0
	}
	chunk("IDAT", zeroZlib(size))
	chunk("IEND", nil)
	return out.Bytes()
}

// zeroZlib is a zlib stream of n zero bytes. A megabyte of zeros is
// compressed once and its blocks, flushed to a byte boundary, repeated:
// each copy refers only to bytes within itself, so the copies decode one
// after the other. Compressing hundreds of MB took seconds under -race.
func zeroZlib(n int) []byte {
	const unit = 1 << 20
	blocks := func(size int) []byte {
		var b bytes.Buffer
		w, _ := flate.NewWriter(&b, flate.BestSpeed)
		w.Write(make([]byte, size))
		w.Flush()
		return b.Bytes()
	}
	out := []byte{0x78, 0x01} // deflate, 32 KB window, no dictionary
	if n >= unit {
		out = append(out, bytes.Repeat(blocks(unit), n/unit)...)
	}
	if n%unit > 0 {
		out = append(out, blocks(n%unit)...)
	}
	out = append(out, 0x03, 0x00)                                    // a last, empty block
	return binary.BigEndian.AppendUint32(out, uint32(n%65521)<<16|1) // Adler-32 of n zeros
}

// cutAfterFirstScanHeader is a JPEG up to the end of its first SOS
// segment: what the decoder reads before it decodes one coefficient, by
// which point it has allocated the picture (and, when progressive, every
// coefficient) from the frame. The decoder then fails at the cut.
func cutAfterFirstScanHeader(data []byte) []byte {
	at := bytes.Index(data, []byte{0xff, jpegSOS})
	return data[:at+2+int(binary.BigEndian.Uint16(data[at+2:]))]
}

// gifSpec describes a blank GIF: frames full-canvas frames of colour 0.
type gifSpec struct {
	w, h       int
	frames     int
	interlaced bool
}

// blankGIF writes s with a two-colour global table.
func blankGIF(s gifSpec) []byte {
	var out bytes.Buffer
	out.WriteString("GIF89a")
	binary.Write(&out, binary.LittleEndian, [2]uint16{uint16(s.w), uint16(s.h)})
	out.Write([]byte{0x80, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff})
	var frame bytes.Buffer
	z := lzw.NewWriter(&frame, lzw.LSB, 2)
	z.Write(make([]byte, s.w*s.h))
	z.Close()
	for range s.frames {
		out.WriteByte(0x2c)
		binary.Write(&out, binary.LittleEndian, [4]uint16{0, 0, uint16(s.w), uint16(s.h)})
		out.WriteByte(map[bool]byte{false: 0, true: 0x40}[s.interlaced])
		out.WriteByte(2)
		for data := frame.Bytes(); len(data) > 0; {
			n := min(len(data), 255)
			out.WriteByte(byte(n))
			out.Write(data[:n])
			data = data[n:]
		}
		out.WriteByte(0)
	}
	out.WriteByte(0x3b)
	return out.Bytes()
}

// withJPEGExtras puts before a JPEG's first segment what the head leaves
// out: an Exif APP1 holding a thumbnail of its own (whose FF DA the work
// would count), an ICC APP2, a comment, bytes the decoder skips between
// segments, and fill bytes before the next marker.
func withJPEGExtras(data []byte) []byte {
	seg := func(marker byte, payload string) []byte {
		return append(binary.BigEndian.AppendUint16([]byte{0xff, marker}, uint16(len(payload)+2)), payload...)
	}
	out := []byte{0xff, 0xd8}
	out = append(out, seg(0xe1, "Exif\x00\x00MM\x00\x2a\xff\xd8\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00\xff\xd9")...)
	out = append(out, seg(0xe2, "ICC_PROFILE\x00\x01\x01not a profile")...)
	out = append(out, seg(0xfe, "a comment")...)
	out = append(out, "xyz\xff"...)
	return append(out, data[2:]...)
}

// withPNGExtras puts chunks the decoder ignores before IHDR, between IHDR
// and IDAT, and after IDAT.
func withPNGExtras(data []byte) []byte {
	chunk := func(typ, body string) []byte {
		c := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
		c = append(append(c, typ...), body...)
		return binary.BigEndian.AppendUint32(c, crc32.ChecksumIEEE(c[4:]))
	}
	ihdrEnd := 8 + 8 + 13 + 4
	idat := bytes.Index(data, []byte("IDAT")) - 4
	out := append([]byte(pngSignature), chunk("prVt", "before IHDR")...)
	out = append(out, data[8:ihdrEnd]...)
	out = append(out, chunk("tEXt", "Comment\x00between IHDR and IDAT")...)
	out = append(out, data[ihdrEnd:idat]...)
	out = append(out, chunk("zzZz", "")...)
	end := len(data) - 12 // IEND
	out = append(out, data[idat:end]...)
	out = append(out, chunk("tEXt", "Comment\x00after IDAT")...)
	return append(out, data[end:]...)
}
