package fsguard

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
)

// What a thumbnail's decode will cost, known from the file's header before
// the decoder allocates anything. Width × height is not enough: Go's
// progressive JPEG decoder keeps every 8×8 block of coefficients as 64
// int32s until the last scan (16 bytes a pixel for CMYK, on top of the
// picture), an interlaced PNG allocates each Adam7 pass beside the whole
// picture, and a grey PNG with a tRNS chunk decodes to 4 or 8 bytes a pixel
// where its colour model says 1 or 2. Each format's cost below is derived
// from its decoder's source (Go 1.26, src/image/...), allocation by
// allocation, and the tests hold each against what the decoder really
// allocates.
//
// A cost read from a header is only as good as the reading, and gatehouse's
// reading of a file it did not write could differ from the decoder's. So
// the decoder never reads the file's own header: it reads the one gatehouse
// priced, written out again segment by segment (the JPEG segments and PNG
// chunks before the picture data that the decoder acts on, and nothing
// between them), followed by the rest of the file as it is. Whatever the
// file's header says, the decoder allocates for the header that was priced
// (both allocate at the first scan or IDAT, from what they read before it,
// and a second frame or IHDR is an error to both), or fails. The decoder's
// own DecodeConfig of that stream must also agree with the priced size and
// colour model. A GIF needs none of this: gif.Decode allocates by the
// canvas its own DecodeConfig reports.
//
// Known limit: the price is a model of Go 1.26's decoders. The tests
// (TestDecodeCostBoundsTheDecoder, FuzzDecodeCost) hold it against the
// decoders the binary is built with, so a Go release whose decoders
// allocate more fails them; nothing measures a decode at run time. Such a
// wall (a child process under RLIMIT_AS, as gate runs git) would need an
// entry point in the gatehouse binary.

const (
	// MaxImageDecodeWork bounds the CPU one thumbnail takes, counted in
	// decoder steps (a coefficient, a decompressed byte or a pixel each):
	// 16 a pixel at MaxImagePixels. With its scaling (2 a pixel), a
	// baseline JPEG takes 5 a pixel (4:2:0) to 8 (4:4:4), 12 when RGB, an
	// 8-bit RGBA PNG 7; a JPEG of thousands of near-empty progressive
	// scans, each a pass over every block, takes hundreds. A step took 0.4
	// to 6.1 ns here (BENCHMARKS.md), so a thumbnail at the bound takes
	// about 4 s at most.
	MaxImageDecodeWork = 16 * MaxImagePixels
	// thumbReserve is what scaling and encoding a thumbnail allocate beside
	// the decode (measured at about 3 MB, mostly the PNG encoder's flate
	// state); the decode gets the rest of MaxImageDecodeBytes.
	thumbReserve = 8 << 20
	// decoderOverhead is a decoder's own state beside its buffers: Huffman
	// tables, a zlib or LZW window, palettes (each well under 64 KB).
	decoderOverhead = 64 << 10
)

// heapBytes is what an allocation of n bytes takes from the heap: the
// runtime gives an object over 32 KB whole 8 KB pages, and a smaller one
// a size class at most an eighth (or 16 bytes) over.
func heapBytes(n int64) int64 {
	if n > 32<<10 {
		return (n + 8191) &^ 8191
	}
	return n + n/8 + 16
}

// decodeCost is what one decode takes. bytes sums every allocation the
// decoder makes, garbage included, so it bounds the heap's growth whatever
// the collector does; work counts the decoder's inner-loop steps, a
// measure of CPU that holds on any machine.
type decodeCost struct{ bytes, work int64 }

// priced is a picture ready to be decoded: the bytes its decoder is to
// read (head, written by gatehouse, then rest, the file's own bytes), the
// decoder's own reading of them, and what decoding them costs.
type priced struct {
	head, rest []byte
	cfg        image.Config
	cost       decodeCost
}

// stream is what the decoder reads.
func (p priced) stream() io.Reader {
	if len(p.head) == 0 {
		return bytes.NewReader(p.rest) // an io.ByteReader, so gif adds no bufio
	}
	return io.MultiReader(bytes.NewReader(p.head), bytes.NewReader(p.rest))
}

// thumbFormat is a format gatehouse decodes to make a thumbnail. The
// decoders are named, not found through image.Decode, which would also
// decode any format another package in the binary registers, with no cost
// known for it.
type thumbFormat struct {
	// price reads a file's header and returns what its decoder is to read
	// and what that costs, or errHeader.
	price  func(unsafeData []byte) (priced, error)
	decode func(io.Reader) (image.Image, error)
	// config is the decoder's own reading of a header.
	config func(io.Reader) (image.Config, error)
}

// thumbFormats are keyed by the type imageType sniffed: the three the page
// shows that Go decodes. WebP, BMP, icons and SVG are sent as they are, or
// refused with a sentence when larger than one reply.
var thumbFormats = map[string]thumbFormat{
	"image/jpeg": {priceJPEG, jpeg.Decode, jpeg.DecodeConfig},
	"image/png":  {pricePNG, png.Decode, png.DecodeConfig},
	// gif.Decode stops after the first frame; gif.DecodeAll would hold
	// every frame, frames × canvas bytes.
	"image/gif": {priceGIF, gif.Decode, gif.DecodeConfig},
}

// errHeader: the header is one gatehouse cannot price, or the decoder's
// own reading of it disagrees with gatehouse's; such a file is never
// decoded.
var errHeader = errors.New("image header not understood")

// priceGIF derives from image/gif (reader.go): gif.Decode reads up to the
// first frame and stops, so later frames cost nothing. That frame is a
// Paletted no larger than the canvas (newImageFromDescriptor refuses one
// that is), one byte a pixel, and an interlaced one is copied once more by
// uninterlace; the blocks before it allocate nothing. So the cost follows
// from the canvas the decoder's own DecodeConfig reports, and the decoder
// reads the file as it is. Work: the LZW output, the check of each pixel
// against the palette and the copy, a pixel each; and the blocks before
// the frame, at most the file.
func priceGIF(unsafeData []byte) (priced, error) {
	cfg, err := gif.DecodeConfig(bytes.NewReader(unsafeData))
	if err != nil {
		return priced{}, errHeader
	}
	if _, ok := cfg.ColorModel.(color.Palette); !ok || cfg.Width < 0 || cfg.Height < 0 {
		return priced{}, errHeader
	}
	canvas := int64(cfg.Width) * int64(cfg.Height)
	cost := decodeCost{bytes: 2*heapBytes(canvas) + decoderOverhead, work: 3*canvas + int64(len(unsafeData))}
	return priced{rest: unsafeData, cfg: cfg, cost: cost}, nil
}
