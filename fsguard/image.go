package fsguard

import (
	"bytes"
	"encoding/base64"
	"errors"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

const (
	// MaxImage bounds an image file read for a device.
	MaxImage = 8 << 20
	// MaxImagePixels bounds what is decoded to make a thumbnail.
	MaxImagePixels = 40_000_000
	// ImageChunk is the most raw bytes one image reply carries.
	ImageChunk = 120 << 10
	// MaxImageDecodeBytes bounds the memory one thumbnail takes, every
	// allocation summed: the decode, as the header the decoder reads says
	// it will allocate (imagecost.go), and thumbReserve to scale and encode
	// it. A 16-bit RGBA PNG of 40 megapixels, interlaced, is a few hundred
	// KB on disk and 635 MB decoded; a progressive CMYK JPEG of 40
	// megapixels is 313 KB and 960 MB.
	MaxImageDecodeBytes = MaxImagePixels * 4
	// thumbEdge is a thumbnail's longest edge.
	thumbEdge = 480
)

// decodeSlot lets one thumbnail decode at a time in this process: a
// decode's memory is bounded by MaxImageDecodeBytes and its CPU by
// MaxImageDecodeWork, and a batch of requests (or several devices) must
// not multiply them.
var decodeSlot = make(chan struct{}, 1)

// Image is one chunk of an image for a device.
type Image struct {
	Mime   string `json:"mime"`
	Total  int64  `json:"total"`
	Offset int64  `json:"offset"`
	Data   string `json:"data"` // base64
	Done   bool   `json:"done"`
}

// ReadImage reads the image unsafePath under the same rules as ReadText,
// plus: only image types, at most MaxImage bytes. variant "full" gives the
// file's own bytes in chunks of ImageChunk from offset; "thumb" a JPEG or
// PNG of at most thumbEdge pixels on its long side, in one chunk, made
// from a PNG, JPEG or GIF only when the picture has at most MaxImagePixels
// and its header prices the decode within MaxImageDecodeBytes and
// MaxImageDecodeWork (imagecost.go); any other image is sent as it is when
// it fits one chunk. A thumbnail refused is a refusal with a sentence, and
// the picture can still be read whole.
func (r *Root) ReadImage(g trust.Grant, unsafePath, variant string, offset int64) (Image, error) {
	a := access{op: "image", grant: g, root: true}
	if variant != "full" && variant != "thumb" || offset < 0 || variant == "thumb" && offset != 0 {
		return Image{}, pathErr(a.op, unsafePath, ErrInvalidPath)
	}
	f, st, rel, err := r.openFile(a, unsafePath)
	if err != nil {
		return Image{}, err
	}
	defer f.Close()
	if st.Size > MaxImage {
		return Image{}, pathErr(a.op, rel, ErrImageTooLarge)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxImage+1))
	if err != nil {
		return Image{}, pathErr(a.op, rel, err)
	}
	if len(data) > MaxImage {
		return Image{}, pathErr(a.op, rel, ErrImageTooLarge)
	}
	mime := imageType(rel, data)
	if mime == "" {
		return Image{}, pathErr(a.op, rel, ErrNotImage)
	}
	if variant == "thumb" {
		thumb, tmime, err := thumbnailer{}.make(mime, data)
		switch {
		case err == nil:
			data, mime = thumb, tmime
		case !errors.Is(err, errNoDecoder):
			return Image{}, pathErr(a.op, rel, err) // a refusal with its sentence
		case len(data) > ImageChunk:
			return Image{}, pathErr(a.op, rel, errNoThumbnail)
		}
	}
	return chunk(mime, data, offset), nil
}

func chunk(mime string, data []byte, offset int64) Image {
	total := int64(len(data))
	offset = min(offset, total)
	end := min(offset+ImageChunk, total)
	return Image{Mime: mime, Total: total, Offset: offset,
		Data: base64.StdEncoding.EncodeToString(data[offset:end]), Done: end == total}
}

// imageType names the image types a device may be shown, by content (and
// for SVG, which is text, by name too).
func imageType(rel string, data []byte) string {
	switch t := http.DetectContentType(data); t {
	case "image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "image/x-icon":
		return t
	}
	if strings.HasSuffix(strings.ToLower(rel), ".svg") && bytes.Contains(data[:min(len(data), 1024)], []byte("<svg")) {
		return "image/svg+xml"
	}
	return ""
}

// errNoDecoder: a type gatehouse may show but does not decode (WebP, BMP,
// icons, SVG), or a PNG, JPEG or GIF whose header it cannot price or its
// decoder cannot read; a small one is sent as it is for a thumbnail, for
// the device to decode.
var errNoDecoder = errors.New("no decoder for thumbnail")

// errNoThumbnail is what a device is told for a large one.
var errNoThumbnail = refusal.Errorf(ErrImageTooLarge,
	"gatehouse makes thumbnails of the PNG, JPEG and GIF images it can read, and sends other images as they are up to 120 KiB; this one is larger. Open it to see it whole.")

// thumbnailer makes thumbnails. ReadImage uses its zero value.
type thumbnailer struct {
	// admitForTest replaces the rule that admits a picture to be decoded,
	// and the decoder then reads the file as it is, as it did under that
	// rule, so a test can show what a decode costs without the rule.
	admitForTest func(cfg image.Config) bool
}

// make prices a PNG, JPEG or GIF from its header, admits it by that price,
// and decodes what was priced (priced.stream, not the file) to scale it
// down.
func (t thumbnailer) make(mime string, unsafeData []byte) ([]byte, string, error) {
	format, ok := thumbFormats[mime]
	if !ok {
		return nil, "", errNoDecoder
	}
	if t.admitForTest != nil {
		cfg, err := format.config(bytes.NewReader(unsafeData))
		if err != nil || !t.admitForTest(cfg) {
			return nil, "", ErrImageTooLarge
		}
		return decodeThumb(format, bytes.NewReader(unsafeData), mime)
	}
	p, err := format.price(unsafeData)
	if err != nil || p.cfg.Width <= 0 || p.cfg.Height <= 0 {
		return nil, "", errNoDecoder
	}
	if err := admit(p); err != nil {
		return nil, "", err
	}
	return decodeThumb(format, p.stream(), mime)
}

// decodeThumb decodes, scales and encodes, one picture at a time.
func decodeThumb(format thumbFormat, stream io.Reader, mime string) ([]byte, string, error) {
	decodeSlot <- struct{}{}
	defer func() { <-decodeSlot }()
	src, err := format.decode(stream)
	if err != nil {
		return nil, "", errNoDecoder
	}
	thumb, tmime, err := encodeThumb(scaleDown(src, thumbEdge), mime != "image/jpeg")
	if err != nil {
		return nil, "", errNoDecoder
	}
	return thumb, tmime, nil
}

// scaleSteps is the work scaleDown does per source pixel, in decoder steps:
// a pixel read through RGBA64At and summed took 5.5 to 11 ns here, about two
// steps of a photograph's decode (5.3 to 6.1 ns, BENCHMARKS.md).
const scaleSteps = 2

// admit decides from its price whether a picture may be decoded: at most
// MaxImagePixels, and a decode and scale that fit MaxImageDecodeBytes and
// MaxImageDecodeWork, each refused with a sentence that says which.
func admit(p priced) error {
	pixels := int64(p.cfg.Width) * int64(p.cfg.Height)
	if pixels > MaxImagePixels {
		return refusal.Errorf(ErrImageTooLarge,
			"This image has %d megapixels; gatehouse makes thumbnails of images up to %d. Open it to see it whole.",
			(pixels+999_999)/1_000_000, MaxImagePixels/1_000_000)
	}
	mem, work := p.cost.bytes+thumbReserve, p.cost.work+scaleSteps*pixels
	if mem > MaxImageDecodeBytes {
		return refusal.Errorf(ErrImageTooLarge,
			"A thumbnail of this image would take %d MB of memory on the computer, over the %d MB gatehouse allows for one. Open it to see it whole.",
			(mem+999_999)/1_000_000, MaxImageDecodeBytes/1_000_000)
	}
	if work > MaxImageDecodeWork {
		return refusal.Errorf(ErrImageTooLarge,
			"A thumbnail of this image would take %.1f times the work gatehouse allows for one (a JPEG of very many scans does). Open it to see it whole.",
			float64(work)/MaxImageDecodeWork)
	}
	return nil
}

// encodeThumb encodes a thumbnail as a PNG when asked and it fits one
// reply, else as a JPEG on white, at the first quality that fits.
func encodeThumb(small image.Image, asPNG bool) ([]byte, string, error) {
	var out bytes.Buffer
	if asPNG {
		if err := png.Encode(&out, small); err == nil && out.Len() <= ImageChunk {
			return out.Bytes(), "image/png", nil
		}
		out.Reset()
	}
	flat := image.NewRGBA(small.Bounds())
	draw.Draw(flat, flat.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.Draw(flat, flat.Bounds(), small, small.Bounds().Min, draw.Over)
	for _, q := range []int{80, 60, 40} {
		out.Reset()
		if err := jpeg.Encode(&out, flat, &jpeg.Options{Quality: q}); err != nil {
			return nil, "", err
		}
		if out.Len() <= ImageChunk {
			break
		}
	}
	return out.Bytes(), "image/jpeg", nil
}

// scaleDown shrinks img so its long edge is at most edge pixels, averaging
// the source pixels each target pixel covers. It reads them through
// RGBA64At, which every picture the decoders return has: At returns an
// interface, and boxing a colour for each of 40 million pixels allocated
// hundreds of MB of garbage beside the decoded picture.
func scaleDown(img image.Image, edge int) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= edge && h <= edge {
		return img
	}
	nw, nh := edge, h*edge/w
	if h > w {
		nw, nh = w*edge/h, edge
	}
	nw, nh = max(nw, 1), max(nh, 1)
	at := func(x, y int) color.RGBA64 {
		r, g, b, a := img.At(x, y).RGBA()
		return color.RGBA64{uint16(r), uint16(g), uint16(b), uint16(a)}
	}
	if m, ok := img.(image.RGBA64Image); ok {
		at = m.RGBA64At
	}
	dst := image.NewRGBA(image.Rect(0, 0, nw, nh))
	for y := range nh {
		y0, y1 := b.Min.Y+y*h/nh, b.Min.Y+max((y+1)*h/nh, y*h/nh+1)
		for x := range nw {
			x0, x1 := b.Min.X+x*w/nw, b.Min.X+max((x+1)*w/nw, x*w/nw+1)
			var rs, gs, bs, as, n uint64
			for sy := y0; sy < y1; sy++ {
				for sx := x0; sx < x1; sx++ {
					c := at(sx, sy)
					rs, gs, bs, as, n = rs+uint64(c.R), gs+uint64(c.G), bs+uint64(c.B), as+uint64(c.A), n+1
				}
			}
			dst.SetRGBA64(x, y, color.RGBA64{uint16(rs / n), uint16(gs / n), uint16(bs / n), uint16(as / n)})
		}
	}
	return dst
}
