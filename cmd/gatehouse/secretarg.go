package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Secrets given to a command (an invite code, a pairing link with its key)
// must not sit in its arguments: every local user can read a process's
// arguments (/proc/PID/cmdline, ps). They come on standard input ("-") or,
// for scripts, in an environment variable, which only the same user can
// read. The argument form keeps working, with a warning.

// maxSecretLine bounds what is read of standard input for one secret.
const maxSecretLine = 16 << 10

var errNoSecret = errors.New("nothing was read from standard input")

// secretArg resolves a secret flag: value "-" reads the first line of
// standard input; "" takes the environment variable envName (which may be
// empty too); anything else is used with a warning on stderr that names
// what it is and the flag's safe form.
func secretArg(e *env, cmd, flagName, value, envName, what string) (string, error) {
	switch value {
	case "-":
		line, err := bufio.NewReaderSize(io.LimitReader(e.stdin, maxSecretLine), maxSecretLine).ReadString('\n')
		line = strings.TrimSpace(line)
		if line == "" {
			if err != nil && !errors.Is(err, io.EOF) {
				return "", err
			}
			return "", errNoSecret
		}
		return line, nil
	case "":
		if e.getenv == nil {
			return "", nil
		}
		return strings.TrimSpace(e.getenv(envName)), nil
	}
	fmt.Fprintf(e.stderr, "gatehouse %s: %s is visible to other users of this computer in the process list; pass it on standard input: --%s - (or in $%s)\n",
		cmd, what, flagName, envName)
	return value, nil
}
