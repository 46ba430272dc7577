package main

import (
	"fmt"

	"github.com/gatehouse/gatehouse/rpc"
)

// unknownMethod refuses a method name the registry does not know, with
// the names it may have been meant as ("git.stauts": git.status), as git
// and gh answer a mistyped command. It returns false for a known name. who
// is the command, for the sentence.
func unknownMethod(e *env, reg *rpc.Registry, who, name string) bool {
	if _, ok := reg.Lookup(name); ok {
		return false
	}
	var names []string
	for _, m := range reg.Methods() {
		names = append(names, m.Name)
	}
	fmt.Fprintf(e.stderr, "gatehouse %s: unknown method %q; 'gatehouse policy' lists them, and docs/methods.md explains each\n", who, name)
	printSuggestions(e.stderr, suggest(name, names))
	return true
}
