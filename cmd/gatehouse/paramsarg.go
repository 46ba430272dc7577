package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// A method's JSON parameters may be too long for the command line (a
// 120 kB files.write fails with "argument list too long"), so, as curl's -d
// and gh api's --input take them: "-" reads standard input and "@FILE"
// reads FILE. A JSON object starts with "{", so neither form can be taken
// for parameters written out.

// maxParams bounds what is read for one call's parameters: far above the
// largest frame a host accepts, so a host's own refusal is what a person
// sees for a large but plausible request, and never an unbounded read.
const maxParams = 8 << 20

var errParamsTooLarge = fmt.Errorf("the parameters are over %d MiB; gatehouse reads at most that much", maxParams>>20)

// readParams returns the JSON parameters an argument names: standard input
// for "-", a file for "@FILE", else the argument itself.
func readParams(e *env, arg string) ([]byte, error) {
	switch {
	case arg == "-":
		return readBoundedParams(e.stdin, "standard input")
	case strings.HasPrefix(arg, "@"):
		f, err := os.Open(arg[1:])
		if err != nil {
			return nil, fmt.Errorf("the parameters file: %w", err)
		}
		defer f.Close()
		return readBoundedParams(f, arg[1:])
	}
	return []byte(arg), nil
}

// readBoundedParams reads r to its end, refusing more than maxParams.
func readBoundedParams(r io.Reader, from string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxParams+1))
	if err != nil {
		return nil, fmt.Errorf("reading the parameters from %s: %w", from, err)
	}
	if len(data) > maxParams {
		return nil, fmt.Errorf("%s: %w", from, errParamsTooLarge)
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, fmt.Errorf("%s: %w", from, errNoParams)
	}
	return data, nil
}

var errNoParams = errors.New("no parameters were read")
