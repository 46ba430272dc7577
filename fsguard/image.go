package fsguard

import (
	"bytes"
	"encoding/base64"
	"errors"
	"image"
	"image/color"
	"image/draw"
	_ "image/gif" // registers the GIF decoder
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse/trust"
)

const (
	// MaxImage bounds an image file read for a device.
	MaxImage = 8 << 20
	// MaxImagePixels bounds what is decoded to make a thumbnail.
	MaxImagePixels = 40_000_000
	// ImageChunk is the most raw bytes one image reply carries.
	ImageChunk = 120 << 10
	// MaxImageDecodeBytes bounds the memory one decoded picture takes:
	// 40 megapixels at 4 bytes each. A 16-bit RGBA PNG of 40 megapixels is
	// a few hundred KB on disk and 320 MB decoded.
	MaxImageDecodeBytes = MaxImagePixels * 4
	// thumbEdge is a thumbnail's longest edge.
	thumbEdge = 480
)

// decodeSlot lets one thumbnail decode at a time in this process: a
// decode's memory is bounded by MaxImageDecodeBytes, and a batch of
// requests (or several devices) must not multiply it.
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
// PNG of at most thumbEdge pixels on its long side, in one chunk, decoded
// only when the picture has at most MaxImagePixels.
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
		if thumb, tmime, err := thumbnail(data); err == nil {
			data, mime = thumb, tmime
		} else if err != errNoDecoder || len(data) > ImageChunk {
			return Image{}, pathErr(a.op, rel, err)
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

// errNoDecoder: a type gatehouse may show but cannot scale (WebP, BMP,
// icons, SVG); a small one is sent as it is for a thumbnail.
var errNoDecoder = errors.New("no decoder for thumbnail")

// thumbnail decodes a PNG, JPEG or GIF after checking its size from the
// header alone, and scales it down.
func thumbnail(data []byte) ([]byte, string, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, "", errNoDecoder
	}
	pixels := int64(cfg.Width) * int64(cfg.Height)
	if cfg.Width <= 0 || cfg.Height <= 0 || pixels > MaxImagePixels || pixels*bytesPerPixel(cfg.ColorModel) > MaxImageDecodeBytes {
		return nil, "", ErrImageTooLarge
	}
	decodeSlot <- struct{}{}
	defer func() { <-decodeSlot }()
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, "", ErrNotImage
	}
	small := scaleDown(src, thumbEdge)
	var out bytes.Buffer
	if format == "png" || format == "gif" {
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

// bytesPerPixel is what the decoder allocates per pixel for a colour model;
// an unknown model counts as the largest.
func bytesPerPixel(m color.Model) int64 {
	switch m {
	case color.GrayModel, color.AlphaModel:
		return 1
	case color.Gray16Model, color.Alpha16Model:
		return 2
	case color.YCbCrModel, color.NYCbCrAModel:
		return 4 // up to 4:4:4 with alpha
	case color.RGBAModel, color.NRGBAModel, color.CMYKModel:
		return 4
	}
	if _, ok := m.(color.Palette); ok {
		return 1
	}
	return 8 // RGBA64, NRGBA64, or a model not named here
}

// scaleDown shrinks img so its long edge is at most edge pixels, averaging
// the source pixels each target pixel covers.
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
	dst := image.NewRGBA(image.Rect(0, 0, nw, nh))
	for y := range nh {
		y0, y1 := b.Min.Y+y*h/nh, b.Min.Y+max((y+1)*h/nh, y*h/nh+1)
		for x := range nw {
			x0, x1 := b.Min.X+x*w/nw, b.Min.X+max((x+1)*w/nw, x*w/nw+1)
			var rs, gs, bs, as, n uint64
			for sy := y0; sy < y1; sy++ {
				for sx := x0; sx < x1; sx++ {
					cr, cg, cb, ca := img.At(sx, sy).RGBA()
					rs, gs, bs, as, n = rs+uint64(cr), gs+uint64(cg), bs+uint64(cb), as+uint64(ca), n+1
				}
			}
			dst.Set(x, y, color.RGBA64{uint16(rs / n), uint16(gs / n), uint16(bs / n), uint16(as / n)})
		}
	}
	return dst
}
