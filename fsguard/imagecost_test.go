package fsguard

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"reflect"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// measured is what a call allocated: total, every allocation summed
// (TotalAlloc, which bounds the heap's growth whatever the collector
// does), and peak, the most the live heap rose above where it started, as
// sampled every 100 µs.
type measured struct{ total, peak int64 }

// measure runs f after a collection and reports its allocation. The test
// process's other goroutines allocate too; the tests that call it are not
// parallel, so that stays in kilobytes.
func measure(f func()) measured {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() int64 { metrics.Read(sample); return int64(sample[0].Value.Uint64()) }
	base := heap()
	var peak int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			peak = max(peak, heap()-base)
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	close(stop)
	wg.Wait()
	return measured{total: int64(after.TotalAlloc - before.TotalAlloc), peak: peak}
}

// priceOf is what gatehouse would decode of data, and its cost.
func priceOf(t testing.TB, mime string, data []byte) priced {
	t.Helper()
	p, err := thumbFormats[mime].price(data)
	if err != nil {
		t.Fatalf("%s of %d bytes: %v", mime, len(data), err)
	}
	return p
}

// costOf is the cost data's header prices.
func costOf(t testing.TB, mime string, data []byte) decodeCost {
	t.Helper()
	return priceOf(t, mime, data).cost
}

// thumbCase is one picture of the table every cost is held against.
type thumbCase struct {
	name, mime string
	data       []byte
}

func (c thumbCase) String() string { return c.name }

// costCases spans what each decoder does differently: every JPEG layout
// the decoder takes (grey, 4:2:0, 4:4:4, RGB, CMYK, YCCK; baseline and
// progressive), every PNG colour type and depth (with and without tRNS,
// plain and Adam7), GIFs plain, interlaced and animated.
func costCases(w, h int) []thumbCase {
	var out []thumbCase
	jpegs := []struct {
		name  string
		comps []jpegComp
		adobe int
		jfif  bool
	}{
		{"gray", grayComps, noAdobe, true},
		{"ycc420", ycc420, noAdobe, true},
		{"ycc420-exif", ycc420, ycbcrAdobe, false},
		{"ycc444", ycc444, noAdobe, true},
		{"rgb-named", rgbComps, noAdobe, false},
		{"rgb-adobe", ycc444, cmykAdobe, false},
		{"cmyk", cmykComps, cmykAdobe, false},
		{"ycck", ycckComps, ycckAdobe, false},
	}
	for _, j := range jpegs {
		for _, prog := range []bool{false, true} {
			s := jpegSpec{w: w, h: h, progressive: prog, comps: j.comps, adobe: j.adobe, jfif: j.jfif}
			name := "jpeg-baseline-" + j.name
			if prog {
				s.acScans, name = 2, "jpeg-progressive-"+j.name
			}
			out = append(out, thumbCase{name, "image/jpeg", blankJPEG(s)})
		}
	}
	pngs := []struct {
		ct     byte
		depths []byte
	}{{0, []byte{1, 2, 4, 8, 16}}, {2, []byte{8, 16}}, {3, []byte{1, 2, 4, 8}}, {4, []byte{8, 16}}, {6, []byte{8, 16}}}
	for _, p := range pngs {
		for _, d := range p.depths {
			for _, il := range []bool{false, true} {
				for _, trns := range []bool{false, true} {
					if trns && p.ct >= 4 {
						continue
					}
					s := pngSpec{w: w, h: h, depth: d, ct: p.ct, interlaced: il, trns: trns}
					out = append(out, thumbCase{fmt.Sprintf("png-ct%d-%dbit-interlaced=%v-trns=%v", p.ct, d, il, trns), "image/png", blankPNG(s)})
				}
			}
		}
	}
	for _, g := range []gifSpec{{w, h, 1, false}, {w, h, 1, true}, {w, h, 5, true}} {
		out = append(out, thumbCase{fmt.Sprintf("gif-frames=%d-interlaced=%v", g.frames, g.interlaced), "image/gif", blankGIF(g)})
	}
	return out
}

// Every cost is an upper bound on what its decoder really allocates, and a
// close one: at most a quarter more (twice for a GIF, whose cost counts
// the copy uninterlace makes whether or not the frame is interlaced), plus
// the fixed decoderOverhead.
// Sizes not a multiple of an MCU or an Adam7 block test the padding.
func TestDecodeCostBoundsTheDecoder(t *testing.T) {
	for _, size := range []image.Point{{601, 397}, {1203, 35}} {
		for _, c := range costCases(size.X, size.Y) {
			p := priceOf(t, c.mime, c.data)
			var err error
			got := measure(func() { _, err = thumbFormats[c.mime].decode(p.stream()) })
			if err != nil {
				t.Fatalf("%s %v: fixture does not decode: %v", c, size, err)
			}
			t.Logf("%-44s %v: allocated %9d, cost %9d (%.2f×)", c, size, got.total, p.cost.bytes, float64(p.cost.bytes)/float64(got.total))
			if got.total > p.cost.bytes {
				t.Errorf("%s %v: decoder allocated %d bytes, over its cost %d", c, size, got.total, p.cost.bytes)
			}
			slack := int64(5) // quarters
			if c.mime == "image/gif" {
				slack = 8 // the uninterlace copy, counted for every frame
			}
			if p.cost.bytes > got.total*slack/4+decoderOverhead {
				t.Errorf("%s %v: cost %d is far over the %d bytes allocated", c, size, p.cost.bytes, got.total)
			}
		}
	}
}

// What gatehouse hands the decoder (the header it wrote, then the rest of
// the file) decodes to the same picture as the file itself, for every
// layout of the table and for files with the segments and chunks the head
// leaves out: Exif, ICC profiles, comments, text, and bytes between
// segments that the decoder skips.
func TestPricedStreamDecodesAsTheFile(t *testing.T) {
	var photoJPEG, photoPNG bytes.Buffer
	if err := jpeg.Encode(&photoJPEG, photo(203, 151), &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(&photoPNG, photo(203, 151)); err != nil {
		t.Fatal(err)
	}
	cases := append(costCases(97, 61),
		thumbCase{"jpeg-photo", "image/jpeg", photoJPEG.Bytes()},
		thumbCase{"jpeg-photo-with-exif-icc-comment-and-fill", "image/jpeg", withJPEGExtras(photoJPEG.Bytes())},
		thumbCase{"png-photo", "image/png", photoPNG.Bytes()},
		thumbCase{"png-photo-with-text-and-private-chunks", "image/png", withPNGExtras(photoPNG.Bytes())})
	for _, c := range cases {
		format := thumbFormats[c.mime]
		want, err := format.decode(bytes.NewReader(c.data))
		if err != nil {
			t.Fatalf("%s: the file does not decode: %v", c, err)
		}
		got, err := format.decode(priceOf(t, c.mime, c.data).stream())
		if err != nil {
			t.Fatalf("%s: the priced stream does not decode: %v", c, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the priced stream decodes to another picture (%T %v, want %T %v)", c, got, got.Bounds(), want, want.Bounds())
		}
	}
}

// thumbReserve covers what a thumbnail allocates beyond its decode at the
// worst: a photograph whose PNG thumbnail is over one reply, so it is
// encoded twice, as a PNG and then as a JPEG.
func TestThumbReserveCoversScaleAndEncode(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, photo(960, 640)); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	decode := measure(func() { _, _ = png.Decode(bytes.NewReader(data)) })
	var mime string
	var err error
	thumb := measure(func() { _, mime, err = thumbnailer{}.make("image/png", data) })
	if err != nil || mime != "image/jpeg" {
		t.Fatalf("thumbnail: %s %v (want a JPEG, after a PNG too large)", mime, err)
	}
	t.Logf("decode %d kB, thumbnail %d kB: %d kB to scale and encode", decode.total/1e3, thumb.total/1e3, (thumb.total-decode.total)/1e3)
	if thumb.total-decode.total > thumbReserve {
		t.Fatalf("scaling and encoding allocated %d bytes, over thumbReserve", thumb.total-decode.total)
	}
}

// FuzzDecodeCost holds the cost to what the decoder allocates on any
// input, not only the well-formed: a header the cost cannot read is never
// decoded; one it can read and prices at most 16 MB is decoded (the
// stream gatehouse writes, as ReadImage does), and the decoder must
// allocate no more than that price.
func FuzzDecodeCost(f *testing.F) {
	for _, c := range costCases(40, 27) {
		f.Add(c.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		mime := imageType("x", data)
		format, ok := thumbFormats[mime]
		if !ok {
			return
		}
		p, err := format.price(data)
		if err != nil || p.cost.bytes > 16<<20 || p.cfg.Width <= 0 || p.cfg.Height <= 0 {
			return
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _ = format.decode(p.stream())
		runtime.ReadMemStats(&after)
		if got := int64(after.TotalAlloc - before.TotalAlloc); got > p.cost.bytes {
			t.Fatalf("%s %d×%d: decoder allocated %d bytes, cost %d", mime, p.cfg.Width, p.cfg.Height, got, p.cost.bytes)
		}
	})
}
