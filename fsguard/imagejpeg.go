package fsguard

import (
	"bytes"
	"encoding/binary"
	"image/color"
	"image/jpeg"
)

// jpegFrame is what the decoder takes from a JPEG's one SOF segment.
type jpegFrame struct {
	progressive   bool
	width, height int
	comps         []jpegSampling
}

type jpegSampling struct {
	id   byte
	h, v int
}

// priceJPEG derives from image/jpeg (reader.go, scan.go):
//
//   - mxx × myy MCUs of 8·h0 × 8·v0 pixels, component i holding
//     mxx·myy·hi·vi blocks (makeImg, processSOS);
//   - the picture: a Gray of 64 bytes a block for one component, else a
//     YCbCr over the padded MCU area with its chroma subsampled, plus a
//     padded plane of black for four (makeImg);
//   - progressive: progCoeffs, one block of 64 int32 (256 bytes) for every
//     block of every component, kept until the end (processSOS);
//   - four components: applyBlack makes an RGBA or CMYK of 4 bytes a pixel
//     beside all of that; three make an RGBA in convertToRGB when the
//     components are named R, G, B or an Adobe APP14 says transform 0.
//
// All of it follows from the frame (SOF) alone, except whether three
// components end in RGB, which is counted whenever an APP14 that could
// say so occurs anywhere in what the decoder reads.
//
// Work: every scan visits every block of its components (an end-of-band
// run skips coefficients, not the visit, which copies the block in and
// out), and each block is dequantized and inverse-transformed, per scan
// for a sequential JPEG and once at the end for a progressive one; and
// the conversion touches each sample.
func priceJPEG(unsafeData []byte) (priced, error) {
	h, err := readJPEGHead(unsafeData)
	if err != nil {
		return priced{}, err
	}
	return h.price()
}

// jpegHead is a JPEG as its decoder is to read it: head, written by
// gatehouse, holds the start of image, the segments before the frame that
// the decoder acts on, and the frame, whose reading is frame; rest is the
// file after the frame, as it is.
type jpegHead struct {
	head, rest []byte
	frame      jpegFrame
}

// price is what decoding h costs, once the decoder's own DecodeConfig of
// h has agreed with the frame on size and components.
func (h jpegHead) price() (priced, error) {
	p, f := priced{head: h.head, rest: h.rest}, h.frame
	cfg, err := jpeg.DecodeConfig(p.stream())
	if err != nil || cfg.Width != f.width || cfg.Height != f.height || jpegComponents(cfg.ColorModel) != len(f.comps) {
		return priced{}, errHeader
	}
	p.cfg = cfg
	p.cost = decodeCost{bytes: f.pictureBytes() + decoderOverhead, work: f.scanWork(h.rest)}
	if len(f.comps) == 4 || len(f.comps) == 3 && f.mayBeRGB(h.head, h.rest) {
		pixels := int64(f.width) * int64(f.height)
		p.cost.bytes += heapBytes(4 * pixels)
		p.cost.work += 4 * pixels
	}
	return p, nil
}

// jpegComponents is how many components a colour model from
// jpeg.DecodeConfig stands for.
func jpegComponents(m color.Model) int {
	switch m {
	case color.GrayModel:
		return 1
	case color.YCbCrModel, color.RGBAModel:
		return 3
	case color.CMYKModel:
		return 4
	}
	return 0
}

// mcus is the frame's MCUs across and down, sized by the first component.
func (f jpegFrame) mcus() (mxx, myy int64) {
	h0, v0 := f.comps[0].h, f.comps[0].v
	return int64((f.width + 8*h0 - 1) / (8 * h0)), int64((f.height + 8*v0 - 1) / (8 * v0))
}

// blocks is how many 8×8 blocks component c has.
func (f jpegFrame) blocks(c jpegSampling) int64 {
	mxx, myy := f.mcus()
	return mxx * myy * int64(c.h*c.v)
}

// allBlocks is how many every component has together.
func (f jpegFrame) allBlocks() (n int64) {
	for _, c := range f.comps {
		n += f.blocks(c)
	}
	return n
}

// pictureBytes is what makeImg allocates, and progCoeffs when progressive.
func (f jpegFrame) pictureBytes() int64 {
	mxx, myy := f.mcus()
	var n int64
	if len(f.comps) == 1 {
		n = heapBytes(64 * mxx * myy)
	} else {
		c0, c1 := f.comps[0], f.comps[1]
		pw, ph := 8*int64(c0.h)*mxx, 8*int64(c0.v)*myy
		cw, ch := pw*int64(c1.h)/int64(c0.h), ph*int64(c1.v)/int64(c0.v)
		n = heapBytes(pw*ph + 2*cw*ch)
	}
	if len(f.comps) == 4 {
		n += heapBytes(64 * f.blocks(f.comps[3]))
	}
	if f.progressive {
		for _, c := range f.comps {
			n += heapBytes(256 * f.blocks(c))
		}
	}
	return n
}

// scanWork is 64 steps for each block each scan visits, another 64 for
// each reconstruction. Scans come after the frame, so they are counted in
// rest, as the places where the bytes FF DA occur: every scan the decoder
// can run (the marker it reads is those two bytes, whatever fill comes
// before) and perhaps a few more.
func (f jpegFrame) scanWork(rest []byte) int64 {
	perVisit, work := int64(2*64), int64(0) // decoded and reconstructed
	if f.progressive {
		perVisit, work = 64, 64*f.allBlocks() // reconstructed once, at the end
	}
	for i := 0; ; i++ {
		at := bytes.Index(rest[i:], []byte{0xff, jpegSOS})
		if at < 0 {
			return work
		}
		i += at
		work += perVisit * f.scanBlocks(rest[i+2:])
	}
}

// scanBlocks is how many blocks the scan whose header starts sos visits:
// those of the components it names, or of all of them when the header
// cannot be read (the decoder then stops there).
func (f jpegFrame) scanBlocks(sos []byte) int64 {
	if len(sos) < 3 || len(sos) < 3+2*int(sos[2]) {
		return f.allBlocks()
	}
	var n int64
	for j := range int(sos[2]) {
		c, ok := f.component(sos[3+2*j])
		if !ok {
			return f.allBlocks()
		}
		n += f.blocks(c)
	}
	return min(n, f.allBlocks())
}

func (f jpegFrame) component(id byte) (jpegSampling, bool) {
	for _, c := range f.comps {
		if c.id == id {
			return c, true
		}
	}
	return jpegSampling{}, false
}

// mayBeRGB says whether a three-component JPEG can end in convertToRGB:
// its components are named R, G, B, or an Adobe APP14 segment with
// transform 0 occurs anywhere in what the decoder reads (isRGB is decided
// after the last segment, so one between scans counts too).
func (f jpegFrame) mayBeRGB(head, rest []byte) bool {
	if f.comps[0].id == 'R' && f.comps[1].id == 'G' && f.comps[2].id == 'B' {
		return true
	}
	return adobeRGB(head) || adobeRGB(rest)
}

// adobeRGB says whether data holds the bytes of an APP14 segment that
// processApp14Marker would read as Adobe's, with transform 0 (or too
// short to say).
func adobeRGB(data []byte) bool {
	for i := 0; ; i++ {
		at := bytes.Index(data[i:], []byte{0xff, jpegAPP14})
		if at < 0 {
			return false
		}
		i += at
		seg := data[i+2:]
		if len(seg) >= 7 && string(seg[2:7]) == "Adobe" && (len(seg) < 14 || seg[13] == 0) {
			return true
		}
	}
}

// JPEG markers, as image/jpeg names them.
const (
	jpegSOF0, jpegSOF1, jpegSOF2 = 0xc0, 0xc1, 0xc2
	jpegDHT, jpegDQT, jpegDRI    = 0xc4, 0xdb, 0xdd
	jpegSOS, jpegEOI, jpegCOM    = 0xda, 0xd9, 0xfe
	jpegRST0, jpegRST7           = 0xd0, 0xd7
	jpegAPP0, jpegAPP14          = 0xe0, 0xee
	jpegAPP15                    = 0xef
)

// maxJPEGHead bounds the segments written before the frame. The decoder
// keeps at most four quantization and eight Huffman tables, and a JFIF
// APP0 (with its own thumbnail) is at most 64 KB, so a real JPEG's head is
// a few KB; one larger is not priced.
const maxJPEGHead = 1 << 20

// jpegHeadSegments are the segments before the frame that the decoder acts
// on, so they are written into the head, each with its reason. The decoder
// reads every other segment it accepts there (COM, APP1 to APP13, APP15)
// by its length and ignores it, so the head leaves them out, and with them
// the bytes between segments that the decoder skips.
var jpegHeadSegments = map[byte]string{
	jpegDQT:   "quantization tables, used to decode",
	jpegDHT:   "Huffman tables, used to decode",
	jpegDRI:   "the restart interval, used to decode",
	jpegAPP0:  "JFIF: three components are YCbCr, not RGB",
	jpegAPP14: "Adobe: the colour transform, which decides RGB, CMYK or YCCK",
}

// readJPEGHead walks the segments before the frame as decoder.decode does
// and writes the head the decoder is to read: the start of image, the
// segments of jpegHeadSegments as they are, and the first SOF. Whether
// this walk matches the decoder's on the file does not matter for the
// cost: the decoder reads the head, not the file's own header.
func readJPEGHead(unsafeData []byte) (jpegHead, error) {
	data := unsafeData
	if len(data) < 2 || data[0] != 0xff || data[1] != 0xd8 {
		return jpegHead{}, errHeader
	}
	head := []byte{0xff, 0xd8}
	for i := 2; ; {
		marker, at := jpegNextMarker(data, i)
		if marker == 0 || marker == jpegEOI || at+2 > len(data) {
			return jpegHead{}, errHeader
		}
		n := int(binary.BigEndian.Uint16(data[at:])) - 2
		if i = at + 2 + n; n < 0 || i > len(data) {
			return jpegHead{}, errHeader
		}
		_, kept := jpegHeadSegments[marker]
		switch {
		case jpegIsSOF(marker):
			head = append(append(head, 0xff, marker), data[at:i]...)
			f, err := jpegSOF(data[at+2:i], marker == jpegSOF2)
			if err != nil {
				return jpegHead{}, err
			}
			return jpegHead{head: head, rest: data[i:], frame: f}, nil
		case kept:
			if head = append(append(head, 0xff, marker), data[at:i]...); len(head) > maxJPEGHead {
				return jpegHead{}, errHeader
			}
		case marker == jpegCOM || jpegAPP0 <= marker && marker <= jpegAPP15:
			// read by its length and ignored
		default: // SOS before SOF, or a marker the decoder does not know
			return jpegHead{}, errHeader
		}
	}
}

// jpegIsSOF: the frames the decoder reads (baseline, extended sequential,
// progressive); it refuses the others.
func jpegIsSOF(marker byte) bool {
	return marker == jpegSOF0 || marker == jpegSOF1 || marker == jpegSOF2
}

// jpegNextMarker reads from data[i:] to the next marker that has a
// segment, as decoder.decode's loop does: bytes before a 0xff skipped, two
// at a time; 0xff00 and restart markers passed over; fill bytes before a
// marker. It returns the marker and where its length begins, or 0 at the
// end of data.
func jpegNextMarker(data []byte, i int) (marker byte, at int) {
	for i+1 < len(data) {
		t0, t1 := data[i], data[i+1]
		for i += 2; t0 != 0xff; i++ {
			if i >= len(data) {
				return 0, i
			}
			t0, t1 = t1, data[i]
		}
		marker := t1
		for marker == 0xff && i < len(data) {
			marker, i = data[i], i+1
		}
		if t1 != 0 && marker != 0xff && (marker < jpegRST0 || marker > jpegRST7) {
			return marker, i
		}
	}
	return 0, i
}

// jpegSOF reads a frame header as processSOF does; what it would refuse
// is refused here too, or never decoded anyway.
func jpegSOF(sof []byte, progressive bool) (jpegFrame, error) {
	n := len(sof)
	if n != 6+3*1 && n != 6+3*3 && n != 6+3*4 || int(sof[5]) != (n-6)/3 {
		return jpegFrame{}, errHeader
	}
	f := jpegFrame{progressive: progressive,
		height: int(sof[1])<<8 | int(sof[2]), width: int(sof[3])<<8 | int(sof[4])}
	for c := sof[6:]; len(c) >= 3; c = c[3:] {
		h, v := int(c[1]>>4), int(c[1]&0x0f)
		if h < 1 || h > 4 || v < 1 || v > 4 {
			return jpegFrame{}, errHeader
		}
		f.comps = append(f.comps, jpegSampling{id: c[0], h: h, v: v})
	}
	if len(f.comps) == 1 {
		f.comps[0].h, f.comps[0].v = 1, 1 // non-interleaved by definition
	}
	for _, c := range f.comps[1:] {
		// The decoder allows no component denser than the first; a file
		// that has one is refused there, and here before the sums below.
		if f.comps[0].h%c.h != 0 || f.comps[0].v%c.v != 0 {
			return jpegFrame{}, errHeader
		}
	}
	return f, nil
}
