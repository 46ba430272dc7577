package fsguard

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// photo is a picture with a photograph's texture (gradients under noise),
// so an encoder cannot make its coefficients or rows nearly free.
func photo(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	rnd := rand.New(rand.NewPCG(1, 2))
	for y := range h {
		for x := range w {
			n := uint8(rnd.IntN(24))
			m.SetRGBA(x, y, color.RGBA{uint8(x*255/w) + n, uint8(y*255/h) + n, uint8((x+y)*127/(w+h)) + n, 255})
		}
	}
	return m
}

func encoded(b *testing.B, enc func(*bytes.Buffer) error) []byte {
	var buf bytes.Buffer
	if err := enc(&buf); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkThumbnail times thumbnails the rule admits, near its bounds,
// and reports each one's work (Msteps, the cost the header gave, with
// scaling) and the time a step took, which is what MaxImageDecodeWork
// means in seconds. Blank pictures decode faster a step than photographs,
// which the photo cases show. With -short it skips the pictures over 12
// megapixels; the old/ cases, only without -short, time the attacks under
// the rule before the decode cost.
func BenchmarkThumbnail(b *testing.B) {
	type pic struct {
		name, mime string
		big        bool
		data       func() []byte
		admitOld   bool
	}
	pics := []pic{
		{"jpeg-photo-baseline-420-12MP", "image/jpeg", false, func() []byte {
			return encoded(b, func(w *bytes.Buffer) error { return jpeg.Encode(w, photo(4000, 3000), &jpeg.Options{Quality: 90}) })
		}, false},
		{"jpeg-blank-baseline-444-40MP", "image/jpeg", true, func() []byte {
			return blankJPEG(jpegSpec{w: 7300, h: 5475, comps: ycc444, adobe: noAdobe, jfif: true})
		}, false},
		{"jpeg-blank-progressive-420-12MP-10scans", "image/jpeg", false, func() []byte {
			return blankJPEG(jpegSpec{w: 4000, h: 3000, progressive: true, comps: ycc420, adobe: noAdobe, jfif: true, acScans: 3})
		}, false},
		{"jpeg-blank-progressive-cmyk-6MP", "image/jpeg", false, func() []byte {
			return blankJPEG(jpegSpec{w: 2500, h: 2500, progressive: true, comps: cmykComps, adobe: cmykAdobe})
		}, false},
		{"jpeg-blank-progressive-gray-4MP-150scans", "image/jpeg", false, func() []byte {
			return blankJPEG(jpegSpec{w: 2000, h: 2000, progressive: true, comps: grayComps, adobe: noAdobe, jfif: true, acScans: 150})
		}, false},
		{"png-photo-rgba8-12MP", "image/png", false, func() []byte {
			return encoded(b, func(w *bytes.Buffer) error { return png.Encode(w, photo(4000, 3000)) })
		}, false},
		{"png-blank-rgba16-interlaced-9MP", "image/png", false, func() []byte {
			return blankPNG(pngSpec{w: 3000, h: 3000, depth: 16, ct: 6, interlaced: true})
		}, false},
		{"gif-blank-interlaced-12MP", "image/gif", false, func() []byte {
			return blankGIF(gifSpec{w: 4000, h: 3000, frames: 1, interlaced: true})
		}, false},
		{"gif-photo-12MP", "image/gif", false, func() []byte {
			return encoded(b, func(w *bytes.Buffer) error { return gif.Encode(w, photo(4000, 3000), nil) })
		}, false},
		{"old/jpeg-blank-progressive-cmyk-40MP", "image/jpeg", true, func() []byte {
			return blankJPEG(jpegSpec{w: 6324, h: 6324, progressive: true, comps: cmykComps, adobe: cmykAdobe})
		}, true},
		{"old/jpeg-blank-progressive-gray-4MP-2000scans", "image/jpeg", true, func() []byte {
			return blankJPEG(jpegSpec{w: 2000, h: 2000, progressive: true, comps: grayComps, adobe: noAdobe, jfif: true, acScans: 2000})
		}, true},
	}
	for _, p := range pics {
		b.Run(p.name, func(b *testing.B) {
			if p.big && testing.Short() {
				b.Skip("a large picture; run without -short")
			}
			data := p.data()
			cfg, err := thumbFormats[p.mime].config(bytes.NewReader(data))
			if err != nil {
				b.Fatal(err)
			}
			cost := costOf(b, p.mime, data)
			work := cost.work + scaleSteps*int64(cfg.Width)*int64(cfg.Height)
			t := thumbnailer{}
			if p.admitOld {
				t.admitForTest = oldAdmit
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := t.make(p.mime, data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(work)/1e6, "Msteps")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(work), "ns/step")
			b.ReportMetric(float64(len(data))/1e3, "kB")
		})
	}
}

// BenchmarkThumbnailCostCheck times ordinary thumbnails with the rule
// (on: the header priced, the priced stream decoded) and without it (off:
// the decoder's DecodeConfig of the file and the file decoded, as before
// the rule), paired in each iteration in alternating order so that a
// shared machine's drift falls on both; on/off is what the rule costs,
// and price-ns/op the pricing alone. The photographs are what a phone
// takes, one with the segments the head leaves out, and a screenshot-sized
// PNG with chunks the head leaves out.
func BenchmarkThumbnailCostCheck(b *testing.B) {
	pics := []struct {
		name, mime string
		data       func() []byte
	}{
		{"jpeg-photo-12MP", "image/jpeg", func() []byte {
			return encoded(b, func(w *bytes.Buffer) error { return jpeg.Encode(w, photo(4000, 3000), &jpeg.Options{Quality: 90}) })
		}},
		{"jpeg-photo-2MP-exif", "image/jpeg", func() []byte {
			return withJPEGExtras(encoded(b, func(w *bytes.Buffer) error { return jpeg.Encode(w, photo(1600, 1200), &jpeg.Options{Quality: 90}) }))
		}},
		{"png-photo-2MP-text", "image/png", func() []byte {
			return withPNGExtras(encoded(b, func(w *bytes.Buffer) error { return png.Encode(w, photo(1600, 1200)) }))
		}},
	}
	for _, p := range pics {
		data := p.data()
		b.Run("pic="+p.name, func(b *testing.B) {
			on, off := thumbnailer{}, thumbnailer{admitForTest: func(image.Config) bool { return true }}
			var tOn, tOff, tPrice, cOn, cOff time.Duration
			timed := func(d, cpu *time.Duration, f func() error) {
				start, cpuStart := time.Now(), processCPU(b)
				if err := f(); err != nil {
					b.Fatal(err)
				}
				*d += time.Since(start)
				*cpu += processCPU(b) - cpuStart
			}
			thumb := func(t thumbnailer) func() error {
				return func() error { _, _, err := t.make(p.mime, data); return err }
			}
			price := func() error {
				pr, err := thumbFormats[p.mime].price(data)
				if err != nil {
					return err
				}
				return admit(pr)
			}
			n := 0
			for b.Loop() {
				if n%2 == 0 {
					timed(&tOn, &cOn, thumb(on))
					timed(&tOff, &cOff, thumb(off))
				} else {
					timed(&tOff, &cOff, thumb(off))
					timed(&tOn, &cOn, thumb(on))
				}
				var cPrice time.Duration
				timed(&tPrice, &cPrice, price)
				n++
			}
			b.ReportMetric(float64(tOn.Nanoseconds())/float64(n), "on-ns/op")
			b.ReportMetric(float64(tOff.Nanoseconds())/float64(n), "off-ns/op")
			b.ReportMetric(float64(tPrice.Nanoseconds())/float64(n), "price-ns/op")
			b.ReportMetric(float64(tOn)/float64(tOff), "on/off")
			b.ReportMetric(float64(cOn)/float64(cOff), "on/off-cpu")
		})
	}
}

// processCPU is the CPU time this process has used, which a shared
// machine's other processes do not stretch as they do the wall clock.
func processCPU(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// BenchmarkScaleDown times scaleDown a source pixel, for scaleSteps, on
// 12-megapixel pictures of the types the decoders return.
func BenchmarkScaleDown(b *testing.B) {
	r := image.Rect(0, 0, 4000, 3000)
	for _, m := range []image.Image{photo(4000, 3000), image.NewYCbCr(r, image.YCbCrSubsampleRatio420), image.NewCMYK(r), image.NewNRGBA64(r)} {
		b.Run(fmt.Sprintf("%T", m), func(b *testing.B) {
			for b.Loop() {
				scaleDown(m, thumbEdge)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(r.Dx()*r.Dy()), "ns/px")
		})
	}
}
