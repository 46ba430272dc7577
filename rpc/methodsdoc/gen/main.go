// Command gen writes the method reference (docs/methods.md) from the method
// registry: go generate ./rpc/methodsdoc runs it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/gatehouse/gatehouse/rpc/methodsdoc"
)

func main() {
	out := flag.String("o", "", "the file to write (docs/methods.md)")
	flag.Parse()
	if *out == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: go run ./rpc/methodsdoc/gen -o docs/methods.md")
		os.Exit(2)
	}
	var b bytes.Buffer
	if err := methodsdoc.Write(&b); err != nil {
		fmt.Fprintf(os.Stderr, "methodsdoc: %v\n", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "methodsdoc: %v\n", err)
		os.Exit(1)
	}
}
