// Package testenv decides what a test does when the machine lacks what it
// needs: the kernel's Landlock, or root. On a contributor's laptop the test
// skips and says why; where the run says the prerequisite is there
// (GATEHOUSE_REQUIRE, which make test sets for the machine CI runs on), a
// missing one is a failure, so a suite meant to run cannot pass by skipping
// every test that proves a wall.
//
//	GATEHOUSE_REQUIRE=landlock,root go test ./gate/
//
// The names:
//
//	landlock  the kernel wall: Landlock with network rules (ABI 4 or later)
//	root      root's powers: giving files to another user, device nodes,
//	          network namespaces
//
// A name GATEHOUSE_REQUIRE lists that is not one of these fails every test
// that asks, so a typo cannot turn the requirement off.
//
// A skip the run chose itself (GATEHOUSE_KERNEL_WALL=off, -short) is not a
// missing prerequisite and does not go through Require.
package testenv

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// Variable is the environment variable that lists the required names,
// separated by commas.
const Variable = "GATEHOUSE_REQUIRE"

// Known are the names Require accepts, in the order the package doc
// explains them.
var Known = []string{"landlock", "root"}

// Require lets t go on when have is true. Otherwise t is skipped with why,
// or fails with why when GATEHOUSE_REQUIRE lists what.
func Require(t testing.TB, what string, have bool, why string) {
	t.Helper()
	if !slices.Contains(Known, what) {
		t.Fatalf("testenv.Require(%q): not a name %s knows (%s)", what, Variable, strings.Join(Known, ", "))
	}
	listed, err := required(os.Getenv(Variable))
	if err != "" {
		t.Fatal(err)
	}
	if have {
		return
	}
	if slices.Contains(listed, what) {
		t.Fatalf("%s=%s requires %s, which this machine lacks: %s", Variable, os.Getenv(Variable), what, why)
	}
	t.Skipf("%s (%s=%s makes this a failure)", why, Variable, what)
}

// required parses GATEHOUSE_REQUIRE's value; a name it does not know is a
// sentence saying so.
func required(v string) ([]string, string) {
	var out []string
	for name := range strings.SplitSeq(v, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(Known, name) {
			return nil, fmt.Sprintf("%s lists %q, which no test knows: the names are %s", Variable, name, strings.Join(Known, ", "))
		}
		out = append(out, name)
	}
	return out, ""
}
