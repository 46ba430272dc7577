package main

import "testing"

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 errors", 1: "1 error", 2: "2 errors"} {
		if got := count(n, "error"); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}
