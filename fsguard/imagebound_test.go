package fsguard

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/hostile"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// The attacks on a thumbnail's bound, each shown first working (the plain
// decoder on the file, and the rule thumbnails were admitted by before,
// oldAdmit) and then stopped by the price of the header the decoder reads.
// Memory is measured as every byte allocated (TotalAlloc), which bounds
// the heap's peak whatever the collector does; CPU as the decoder steps
// the header implies, since a test on a shared machine cannot hold a
// decode to a wall-clock time (BENCHMARKS.md has the times).

// oldAdmit is the rule before the decode cost (commit 73b4f32): at most
// MaxImagePixels, and pixels times what a pixel of the header's colour
// model takes at most MaxImageDecodeBytes.
func oldAdmit(cfg image.Config) bool {
	pixels := int64(cfg.Width) * int64(cfg.Height)
	return pixels <= MaxImagePixels && pixels*oldBytesPerPixel(cfg.ColorModel) <= MaxImageDecodeBytes
}

func oldBytesPerPixel(m color.Model) int64 {
	switch m {
	case color.GrayModel, color.AlphaModel:
		return 1
	case color.Gray16Model, color.Alpha16Model:
		return 2
	case color.YCbCrModel, color.NYCbCrAModel, color.RGBAModel, color.NRGBAModel, color.CMYKModel:
		return 4
	}
	if _, ok := m.(color.Palette); ok {
		return 1
	}
	return 8
}

// imageRoot is a checkout holding each named picture.
func imageRoot(t *testing.T, files map[string][]byte) *Root {
	t.Helper()
	base := hostile.Build(t, "file root/a.txt = x")
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(base, "root", name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return openTestRoot(t, base)
}

// refusedThumb asks for name's thumbnail through ReadImage, expects the
// refusal ErrImageTooLarge with a sentence holding want, and checks that
// refusing allocated next to nothing and the file is still readable whole.
func refusedThumb(t *testing.T, r *Root, name string, want []byte, sentence string) {
	t.Helper()
	var err error
	got := measure(func() { _, err = r.ReadImage(trust.View, name, "thumb", 0) })
	if !errors.Is(err, ErrImageTooLarge) || !strings.Contains(refusal.Sentence(err), sentence) {
		t.Fatalf("thumbnail of %s: %v (%q), want ErrImageTooLarge saying %q", name, err, refusal.Sentence(err), sentence)
	}
	t.Logf("new rule: %s refused, %d kB allocated: %q", name, got.total/1e3, refusal.Sentence(err))
	if got.total > 2*MaxImage {
		t.Errorf("refusing %s allocated %d bytes: more than reading it", name, got.total)
	}
	var whole []byte
	for off := int64(0); ; {
		c, err := r.ReadImage(trust.View, name, "full", off)
		if err != nil {
			t.Fatalf("full %s: %v", name, err)
		}
		part, _ := base64.StdEncoding.DecodeString(c.Data)
		whole = append(whole, part...)
		if c.Done {
			break
		}
		off += int64(len(part))
	}
	if !bytes.Equal(whole, want) {
		t.Fatalf("full %s: read %d bytes, not the file's %d", name, len(whole), len(want))
	}
}

// boundedThumb makes data's thumbnail the way ReadImage does and checks
// that everything it allocated stays under MaxImageDecodeBytes.
func boundedThumb(t *testing.T, mime string, data []byte) {
	t.Helper()
	cfg, _, _ := image.DecodeConfig(bytes.NewReader(data))
	var err error
	got := measure(func() { _, _, err = thumbnailer{}.make(mime, data) })
	if err != nil {
		t.Fatalf("%d×%d: %v", cfg.Width, cfg.Height, err)
	}
	t.Logf("new rule: %d×%d admitted, %d MB allocated (heap peak seen %d MB), bound %d MB",
		cfg.Width, cfg.Height, got.total/1e6, got.peak/1e6, MaxImageDecodeBytes/1_000_000)
	if got.total > MaxImageDecodeBytes {
		t.Fatalf("%d×%d: the thumbnail allocated %d bytes, over MaxImageDecodeBytes", cfg.Width, cfg.Height, got.total)
	}
}

// oldThumbOverBound decodes data under oldAdmit and checks that it really
// allocates past MaxImageDecodeBytes: the attack, working.
func oldThumbOverBound(t *testing.T, mime string, data []byte) {
	t.Helper()
	cfg, _, _ := image.DecodeConfig(bytes.NewReader(data))
	var err error
	got := measure(func() { _, _, err = thumbnailer{admitForTest: oldAdmit}.make(mime, data) })
	if err != nil {
		t.Fatalf("old rule refused %d×%d: %v", cfg.Width, cfg.Height, err)
	}
	old := int64(cfg.Width) * int64(cfg.Height) * oldBytesPerPixel(cfg.ColorModel)
	t.Logf("old rule: %d×%d (%d kB on disk) admitted at %d MB, allocated %d MB (heap peak seen %d MB), bound %d MB",
		cfg.Width, cfg.Height, len(data)/1e3, old/1e6, got.total/1e6, got.peak/1e6, MaxImageDecodeBytes/1_000_000)
	if got.total <= MaxImageDecodeBytes {
		t.Fatalf("the old rule's decode allocated %d bytes, within the bound: no attack shown", got.total)
	}
}

// largestAdmitted is the largest square side (to 16 pixels) whose picture
// probe(side) the new rule admits.
func largestAdmitted(t *testing.T, mime string, probe func(side int) []byte) int {
	t.Helper()
	admitted := func(side int) bool {
		p, err := thumbFormats[mime].price(probe(side))
		return err == nil && admit(p) == nil
	}
	lo, hi := 16, 8192
	if !admitted(lo) || admitted(hi) {
		t.Fatalf("no edge between %d and %d", lo, hi)
	}
	for hi-lo > 16 {
		if mid := (lo + hi) / 2; admitted(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// plainDecodeOverBound decodes data with the plain decoder, as image.Decode
// did before any rule, and checks that it allocates at least times
// MaxImageDecodeBytes: the attack, working.
func plainDecodeOverBound(t *testing.T, what string, decode func(*bytes.Reader) (image.Image, error), data []byte, times int64) {
	t.Helper()
	got := measure(func() { _, _ = decode(bytes.NewReader(data)) })
	t.Logf("plain decoder: %s (%d bytes) allocated %d MB, %.1f× the bound of %d MB",
		what, len(data), got.total/1e6, float64(got.total)/MaxImageDecodeBytes, MaxImageDecodeBytes/1_000_000)
	if got.total < times*MaxImageDecodeBytes {
		t.Fatalf("the plain decoder allocated %d bytes for %s, under %d× the bound: no attack shown", got.total, what, times)
	}
}

// The black-box attack: a 313 KB progressive CMYK JPEG of 40 megapixels.
// The decoder keeps 64 int32 coefficients for every block of its 4
// components (16 bytes a pixel) beside the picture and its black plane
// (4), all allocated at the first scan's header from the frame, then
// converts to CMYK (4 more): 24 bytes a pixel, 960 MB. The old rule
// counted 4 bytes a pixel, 160 MB, and admitted it. Decoding it whole is
// too much for a shared test machine (15 s and 2.8 GB under -race), so
// the plain decoder is shown what it reads before its first coefficient,
// 800 MB of allocation, and the old rule decoding one of 8.4 megapixels
// whole (34 MB by its count, 204 MB allocated); BENCHMARKS.md has the
// whole bomb. The new rule refuses both from the header and admits only
// what fits.
func TestThumbnailOfAProgressiveCMYKJPEGIsBounded(t *testing.T) {
	cmyk := func(side int) []byte {
		return blankJPEG(jpegSpec{w: side, h: side, progressive: true, comps: cmykComps, adobe: cmykAdobe})
	}
	bomb := cmyk(6324)
	if len(bomb)>>10 != 305 { // 312,8xx bytes, as reported
		t.Fatalf("the 40-megapixel bomb is %d bytes", len(bomb))
	}
	cfg, _ := jpeg.DecodeConfig(bytes.NewReader(bomb))
	if !oldAdmit(cfg) {
		t.Fatal("the old rule refused the reported bomb")
	}
	plainDecodeOverBound(t, "the bomb up to its first scan", asImage(jpeg.Decode), cutAfterFirstScanHeader(bomb), 4)
	small := cmyk(2900)
	oldThumbOverBound(t, "image/jpeg", small)

	r := imageRoot(t, map[string][]byte{"bomb.jpg": bomb, "small.jpg": small})
	refusedThumb(t, r, "bomb.jpg", bomb, "would take 970 MB of memory on the computer, over the 160 MB")
	refusedThumb(t, r, "small.jpg", small, "MB of memory on the computer, over the 160 MB")

	side := largestAdmitted(t, "image/jpeg", cmyk)
	boundedThumb(t, "image/jpeg", cmyk(side))
}

// asImage adapts a decoder to plainDecodeOverBound.
func asImage(decode func(io.Reader) (image.Image, error)) func(*bytes.Reader) (image.Image, error) {
	return func(r *bytes.Reader) (image.Image, error) { return decode(r) }
}

// A progressive JPEG may hold any number of scans, and the decoder visits
// every block of a scan's component even when one end-of-band run of a few
// bits covers 32,767 of them. 2,000 AC scans of a 4-megapixel grey picture
// are 40 KB and 125 million block visits (8 billion decoder steps, 12
// times MaxImageDecodeWork, 3.7 s here; a 312 KB file holds 16,000); the
// old rule, counting bytes, admitted it at 4 MB. The cost counts every
// scan, exactly.
func TestThumbnailOfAJPEGOfManyScansIsBoundedInWork(t *testing.T) {
	gray := func(side, scans int) []byte {
		return blankJPEG(jpegSpec{w: side, h: side, progressive: true, comps: grayComps, adobe: noAdobe, jfif: true, acScans: scans})
	}
	bomb := gray(2000, 2000)
	cfg, _ := jpeg.DecodeConfig(bytes.NewReader(bomb))
	if !oldAdmit(cfg) {
		t.Fatal("the old rule refused the many-scan JPEG")
	}
	// The decoder runs every scan of such a file: a smaller one decodes.
	if _, _, err := (thumbnailer{admitForTest: oldAdmit}).make("image/jpeg", gray(256, 200)); err != nil {
		t.Fatalf("a JPEG of 200 scans did not decode: %v", err)
	}
	blocks := int64(250 * 250)
	for _, scans := range []int{0, 1, 2000} {
		got := costOf(t, "image/jpeg", gray(2000, scans))
		want := 64*blocks*int64(1+scans) + 64*blocks // every scan visits each block; one reconstruction
		if got.work != want {
			t.Fatalf("%d AC scans: work %d, want %d", scans, got.work, want)
		}
	}
	t.Logf("%d kB, %.1f× MaxImageDecodeWork", len(bomb)/1e3, float64(costOf(t, "image/jpeg", bomb).work)/MaxImageDecodeWork)
	r := imageRoot(t, map[string][]byte{"scans.jpg": bomb})
	refusedThumb(t, r, "scans.jpg", bomb, "times the work gatehouse allows")
	// The same picture with the usual handful of scans is a thumbnail.
	boundedThumb(t, "image/jpeg", gray(2000, 5))
}

// A 16-bit PNG interlaced with Adam7: the decoder allocates the whole
// picture (8 bytes a pixel) before it reads a row, and then each of the
// seven passes, another picture's worth between them. The old rule
// counted 8 bytes a pixel for 16-bit RGBA and admitted 3,400 × 3,400 at
// 92 MB; the decode allocates twice that. A grey 16-bit one with a tRNS
// chunk is worse: the colour model says 2 bytes a pixel and the decoder
// makes NRGBA64, 8, so 16 interlaced: the old rule admitted 40 megapixels
// of it, 635 MB to decode, of which the plain decoder allocates half
// before it reads a row.
func TestThumbnailOfADeepInterlacedPNGIsBounded(t *testing.T) {
	deep := func(ct byte, trns, noData bool) func(int) []byte {
		return func(side int) []byte {
			return blankPNG(pngSpec{w: side, h: side, depth: 16, ct: ct, interlaced: true, trns: trns, noData: noData})
		}
	}
	bomb := deep(0, true, false)(6300)
	cfg, _ := png.DecodeConfig(bytes.NewReader(bomb))
	if !oldAdmit(cfg) {
		t.Fatal("the old rule refused the grey bomb")
	}
	plainDecodeOverBound(t, "the grey bomb's header, with no rows", asImage(png.Decode), deep(0, true, true)(6300), 2)
	rgba := deep(6, false, false)(3400)
	oldThumbOverBound(t, "image/png", rgba)

	r := imageRoot(t, map[string][]byte{"rgba.png": rgba, "gray.png": bomb})
	refusedThumb(t, r, "rgba.png", rgba, "MB of memory on the computer, over the 160 MB")
	refusedThumb(t, r, "gray.png", bomb, "would take 644 MB of memory on the computer, over the 160 MB")

	side := largestAdmitted(t, "image/png", deep(6, false, true))
	boundedThumb(t, "image/png", deep(6, false, false)(side))
}

// The wall that does not depend on reading a header right: the decoder
// reads the header gatehouse priced, not the file's. Here a stand-in for a
// mistake in that reading (the first frame or IHDR found anywhere, the way
// a naive parser finds it) takes a small one hidden in a comment or an
// unknown chunk for the real one, while the decoder skips it and takes the
// bomb's. Priced from the hidden header and decoding the file, the attack
// works: the plain decoder allocates hundreds of MB. Decoding what was
// priced, it cannot. For the JPEG, the decoder's own DecodeConfig of that
// stream meets the bomb's frame after the hidden one, a second SOF, so the
// stream is never decoded; for the PNG it agrees, and the decoder, given
// the 8×8 header and the bomb's rows, allocates for 8×8 and stops at too
// much pixel data. Decoded anyway, either stays within the small price.
func TestThumbnailDecodesTheHeaderItPriced(t *testing.T) {
	for _, c := range []struct {
		name, mime string
		bomb       func(header bool) []byte // whole, or up to where the decoder has allocated
		hide       func(bomb []byte) []byte // a small header hidden before the bomb's
		naive      func(file []byte) naiveReading
	}{
		{"jpeg", "image/jpeg", func(header bool) []byte {
			bomb := blankJPEG(jpegSpec{w: 6324, h: 6324, progressive: true, comps: cmykComps, adobe: cmykAdobe})
			if header {
				return cutAfterFirstScanHeader(bomb)
			}
			return bomb
		}, hideJPEGFrame, naiveJPEG},
		{"png", "image/png", func(header bool) []byte {
			return blankPNG(pngSpec{w: 6300, h: 6300, depth: 16, ct: 0, interlaced: true, trns: true, noData: header})
		}, hidePNGHeader, naivePNG},
	} {
		format := thumbFormats[c.mime]
		file := c.hide(c.bomb(false))
		n := c.naive(file)
		plain := measure(func() { _, _ = format.decode(bytes.NewReader(c.hide(c.bomb(true)))) })
		t.Logf("%s: the hidden header prices %d kB; the plain decoder on the file allocated %d MB", c.name, n.cost.bytes/1e3, plain.total/1e6)
		if n.cost.bytes > 1<<20 || plain.total < 2*MaxImageDecodeBytes {
			t.Fatalf("%s: no attack shown: priced %d, allocated %d", c.name, n.cost.bytes, plain.total)
		}
		// The naive stream is either never decoded, the decoder's own
		// DecodeConfig of it disagreeing, or priced small; decoded anyway,
		// it allocates within that small price.
		switch p, err := n.price(); {
		case errors.Is(err, errHeader):
			t.Logf("%s: the decoder's DecodeConfig disagrees with the naive stream: it is never decoded", c.name)
		case err != nil || p.cost.bytes > 1<<20:
			t.Fatalf("%s: the naive stream priced %d bytes: %v", c.name, p.cost.bytes, err)
		default:
			t.Logf("%s: the naive stream is priced at %d kB, and admitted", c.name, p.cost.bytes/1e3)
		}
		var err error
		got := measure(func() { _, err = format.decode(n.stream.stream()) })
		t.Logf("%s: decoding the naive stream: %d kB allocated, %v", c.name, got.total/1e3, err)
		if got.total > n.cost.bytes {
			t.Fatalf("%s: the naive stream allocated %d bytes, over its price %d", c.name, got.total, n.cost.bytes)
		}
		// And gatehouse's own reading finds the bomb.
		r := imageRoot(t, map[string][]byte{"hidden": file})
		refusedThumb(t, r, "hidden", file, "MB of memory on the computer, over the 160 MB")
	}
}

// naiveReading is what a mistaken reading of a header makes: the stream it
// would hand the decoder, its price, and the cost it read.
type naiveReading struct {
	stream priced
	price  func() (priced, error)
	cost   decodeCost
}

// hideJPEGFrame puts an 8×8 grey frame in a comment before bomb's
// segments: the decoder reads the comment by its length and skips it.
func hideJPEGFrame(bomb []byte) []byte {
	fake := blankJPEG(jpegSpec{w: 8, h: 8, comps: grayComps, adobe: noAdobe, jfif: true})
	sof := fake[bytes.Index(fake, []byte{0xff, jpegSOF0}):]
	sof = sof[:2+int(binary.BigEndian.Uint16(sof[2:]))]
	out := binary.BigEndian.AppendUint16([]byte{0xff, 0xd8, 0xff, jpegCOM}, uint16(2+len(sof)))
	return append(append(out, sof...), bomb[2:]...)
}

// naiveJPEG takes the first bytes FF C0 anywhere for the frame.
func naiveJPEG(file []byte) naiveReading {
	at := bytes.Index(file, []byte{0xff, jpegSOF0})
	end := at + 4 + int(binary.BigEndian.Uint16(file[at+2:])) - 2
	f, _ := jpegSOF(file[at+4:end], false)
	h := jpegHead{head: append([]byte{0xff, 0xd8}, file[at:end]...), rest: file[end:], frame: f}
	return naiveReading{priced{head: h.head, rest: h.rest}, h.price, decodeCost{bytes: f.pictureBytes() + decoderOverhead}}
}

// hidePNGHeader puts the IHDR of an 8×8 grey PNG in a private chunk before
// bomb's IHDR: the decoder reads the chunk by its length and skips it.
func hidePNGHeader(bomb []byte) []byte {
	ihdr := blankPNG(pngSpec{w: 8, h: 8, depth: 8, ct: 0})[8 : 8+25]
	out := binary.BigEndian.AppendUint32([]byte(pngSignature), uint32(len(ihdr)))
	out = append(append(out, "prVt"...), ihdr...)
	out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[12:]))
	return append(out, bomb[8:]...)
}

// naivePNG takes the first bytes IHDR anywhere for the header.
func naivePNG(file []byte) naiveReading {
	at, idat := bytes.Index(file, []byte("IHDR"))-4, bytes.Index(file, []byte("IDAT"))-4
	h := pngHead{head: append([]byte(pngSignature), file[at:at+25]...), rest: file[idat:]}
	h.readIHDR(file[at+8 : at+25])
	_, px := h.pixel()
	cost := decodeCost{bytes: heapBytes(px*int64(h.width)*int64(h.height)) + decoderOverhead}
	return naiveReading{priced{head: h.head, rest: h.rest}, h.price, cost}
}

// An animated GIF of many frames: gif.DecodeAll would keep every frame, a
// canvas each, but a thumbnail takes gif.Decode, which stops after the
// first. The thumbnail of 40 frames allocates what one frame's does, and
// both stay within the cost, which counts one canvas and its
// uninterlaced copy.
func TestThumbnailOfAManyFrameGIFDecodesOneFrame(t *testing.T) {
	many := blankGIF(gifSpec{w: 1000, h: 800, frames: 40, interlaced: true})
	one := blankGIF(gifSpec{w: 1000, h: 800, frames: 1, interlaced: true})
	all := measure(func() {
		if g, err := gif.DecodeAll(bytes.NewReader(many)); err != nil || len(g.Image) != 40 {
			t.Fatalf("DecodeAll: %v", err)
		}
	})
	var err error
	thumbMany := measure(func() { _, _, err = thumbnailer{}.make("image/gif", many) })
	if err != nil {
		t.Fatal(err)
	}
	thumbOne := measure(func() { _, _, err = thumbnailer{}.make("image/gif", one) })
	if err != nil {
		t.Fatal(err)
	}
	cost := costOf(t, "image/gif", many)
	t.Logf("40 frames of 1000×800 (%d kB): DecodeAll %d MB; thumbnail %d kB, of one frame %d kB; cost %d kB + reserve",
		len(many)/1e3, all.total/1e6, thumbMany.total/1e3, thumbOne.total/1e3, cost.bytes/1e3)
	if all.total < 40*800_000 {
		t.Fatalf("DecodeAll allocated %d bytes: not a canvas a frame", all.total)
	}
	if thumbMany.total > thumbOne.total+64<<10 || thumbMany.total > cost.bytes+thumbReserve {
		t.Fatalf("the thumbnail of 40 frames allocated %d bytes, one frame's %d, cost %d", thumbMany.total, thumbOne.total, cost.bytes)
	}
}

// Every type the page asks a thumbnail for (web/src/ui.js IMAGE: png, jpg,
// jpeg, gif, webp, bmp, ico, svg) gets one of three answers, never an
// internal error: a thumbnail (PNG, JPEG, GIF that gatehouse can read);
// the file as it is, when it fits one reply (WebP, BMP, icons, SVG, which
// gatehouse does not decode, and a PNG, JPEG or GIF it cannot read); or,
// when larger, a refusal with a sentence, the file still readable whole.
func TestThumbnailOfEveryTypeThePageShows(t *testing.T) {
	webp := func(n int) []byte {
		return append([]byte("RIFF\x00\x00\x00\x00WEBPVP8 "), make([]byte, n)...)
	}
	svg := func(n int) []byte {
		return append([]byte(`<svg xmlns="http://www.w3.org/2000/svg">`), bytes.Repeat([]byte(" "), n)...)
	}
	var photoPNG bytes.Buffer
	if err := png.Encode(&photoPNG, photo(600, 400)); err != nil {
		t.Fatal(err)
	}
	badJPEG := blankJPEG(jpegSpec{w: 600, h: 400, comps: ycc420, adobe: noAdobe, jfif: true})
	badJPEG = badJPEG[:len(badJPEG)-200] // a header it prices, then too few blocks
	bigBadJPEG := append(bytes.Clone(badJPEG[:len(badJPEG)-2]), make([]byte, ImageChunk)...)
	files := map[string][]byte{
		"photo.png":  photoPNG.Bytes(),
		"blank.jpg":  blankJPEG(jpegSpec{w: 900, h: 600, comps: ycc420, adobe: noAdobe, jfif: true}),
		"anim.gif":   blankGIF(gifSpec{w: 300, h: 200, frames: 3}),
		"small.webp": webp(100), "big.webp": webp(ImageChunk),
		"small.bmp": append([]byte("BM"), make([]byte, 100)...), "big.bmp": append([]byte("BM"), make([]byte, ImageChunk)...),
		"small.ico": append([]byte{0, 0, 1, 0}, make([]byte, 100)...), "big.ico": append([]byte{0, 0, 1, 0}, make([]byte, ImageChunk)...),
		"small.svg": svg(100), "big.svg": svg(ImageChunk),
		"bad.jpg": badJPEG, "bigbad.jpg": bigBadJPEG,
	}
	r := imageRoot(t, files)
	for name, want := range map[string]string{
		"photo.png": "image/jpeg", // a PNG thumbnail of a photograph is over one reply
		"blank.jpg": "image/jpeg", "anim.gif": "image/png",
		"small.webp": "image/webp", "small.bmp": "image/bmp", "small.ico": "image/x-icon", "small.svg": "image/svg+xml",
		"bad.jpg": "image/jpeg",
	} {
		th, err := r.ReadImage(trust.View, name, "thumb", 0)
		if err != nil || th.Mime != want || !th.Done {
			t.Fatalf("thumbnail of %s: %s %v, want %s in one reply", name, th.Mime, err, want)
		}
		data, _ := base64.StdEncoding.DecodeString(th.Data)
		if strings.HasPrefix(name, "small.") || name == "bad.jpg" {
			if !bytes.Equal(data, files[name]) {
				t.Fatalf("thumbnail of %s: %d bytes, not the file as it is", name, len(data))
			}
			continue
		}
		cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
		if err != nil || max(cfg.Width, cfg.Height) > thumbEdge {
			t.Fatalf("thumbnail of %s: %d×%d %v", name, cfg.Width, cfg.Height, err)
		}
	}
	for _, name := range []string{"big.webp", "big.bmp", "big.ico", "big.svg", "bigbad.jpg"} {
		refusedThumb(t, r, name, files[name], "thumbnails of the PNG, JPEG and GIF images it can read")
	}
}
