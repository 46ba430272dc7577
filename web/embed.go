// Package web holds the page a phone opens from the pairing QR code, built
// from web/src by esbuild (npm run build) into web/dist, which is committed
// and embedded so that go build needs no Node.js. A test checks that dist
// equals a fresh build from the lockfile.
package web

import (
	"embed"
	"io/fs"
)

//go:embed dist
var dist embed.FS

// Page is the built page: index.html, app.js, style.css.
func Page() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // the embed pattern names dist: it always exists
	}
	return sub
}
