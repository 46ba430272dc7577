package fsguard

import (
	"bytes"
	"errors"
	"image"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/internal/hostile"
	"github.com/gatehouse/gatehouse/trust"
)

// deepPNG is a real, decodable PNG of w×h pixels at 16 bits per channel
// with alpha (8 bytes a pixel decoded), all zero: a few hundred KB on disk.
// blankPNG writes its zlib stream without compressing the 317 MB of rows,
// which took 22 s under -race.
func deepPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	return blankPNG(pngSpec{w: w, h: h, depth: 16, ct: 6})
}

// A PNG under the pixel bound can still cost eight bytes a pixel decoded:
// 6,300 × 6,300 at 16-bit RGBA is 393 KB on disk and 317 MB in memory, in
// gatehouse's own process (the git memory bound does not reach it). The
// thumbnail refuses it from the header, before decoding.
func TestThumbnailOfADeepPNGIsRefusedBeforeDecoding(t *testing.T) {
	bomb := deepPNG(t, 6300, 6300)
	cfg, _, err := image.DecodeConfig(bytes.NewReader(bomb))
	if err != nil {
		t.Fatal(err)
	}
	pixels := int64(cfg.Width) * int64(cfg.Height)
	if len(bomb) > 1<<20 || pixels > MaxImagePixels || pixels*8 < 300<<20 {
		t.Fatalf("fixture: %d bytes, %d pixels", len(bomb), pixels)
	}
	base := hostile.Build(t, "file root/a.txt = x")
	if err := os.WriteFile(filepath.Join(base, "root/deep.png"), bomb, 0o644); err != nil {
		t.Fatal(err)
	}
	r := openTestRoot(t, base)
	if _, err := r.ReadImage(trust.View, "deep.png", "thumb", 0); !errors.Is(err, ErrImageTooLarge) {
		t.Fatalf("a %d MB decode was not refused: %v", pixels*8>>20, err)
	}
	// A small deep PNG still makes a thumbnail.
	if err := os.WriteFile(filepath.Join(base, "root/small.png"), deepPNG(t, 600, 400), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadImage(trust.View, "small.png", "thumb", 0); err != nil {
		t.Fatal(err)
	}
}
