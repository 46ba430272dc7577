package main

import (
	"runtime/debug"
	"testing"
)

// TestBuildVersion: the version printed comes from where the go command put
// it — the tag 'go install ...@v0.3.0' fetched, the pseudo-version 'go build'
// derives from a checkout's tags — and a packager's -X value wins over both.
func TestBuildVersion(t *testing.T) {
	mod := func(v string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/gatehouse/gatehouse", Version: v}}
	}
	for _, tc := range []struct {
		name, ldflags string
		info          *debug.BuildInfo
		want          string
	}{
		{"installed from a tag", "", mod("v0.3.0"), "v0.3.0"},
		{"built in a checkout after a tag", "", mod("v0.3.1-0.20261202024342-a57136b13c99+dirty"), "v0.3.1-0.20261202024342-a57136b13c99+dirty"},
		{"built without vcs or tags", "", mod("(devel)"), "devel"},
		{"no version recorded", "", mod(""), "devel"},
		{"no build info", "", nil, "devel"},
		{"packager's -X wins", "v9.9.9", mod("v0.3.0"), "v9.9.9"},
	} {
		if got := buildVersion(tc.ldflags, tc.info); got != tc.want {
			t.Errorf("%s: buildVersion(%q, %v) = %q, want %q", tc.name, tc.ldflags, tc.info, got, tc.want)
		}
	}
}

// TestBuildCommit: the commit is the recorded revision, 12 digits, with
// "+dirty" for a changed checkout, or "unknown" when none was recorded.
func TestBuildCommit(t *testing.T) {
	vcs := func(kv ...string) *debug.BuildInfo {
		info := &debug.BuildInfo{}
		for i := 0; i < len(kv); i += 2 {
			info.Settings = append(info.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return info
	}
	const rev = "a57136b13c99c68f7966f323529871c9c3598e30"
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"clean", vcs("vcs.revision", rev, "vcs.modified", "false"), "a57136b13c99"},
		{"dirty", vcs("vcs.revision", rev, "vcs.modified", "true"), "a57136b13c99+dirty"},
		{"short revision kept whole", vcs("vcs.revision", "abc"), "abc"},
		{"no revision", vcs("vcs.modified", "true"), "unknown"},
		{"no build info", nil, "unknown"},
	} {
		if got := buildCommit(tc.info); got != tc.want {
			t.Errorf("%s: buildCommit = %q, want %q", tc.name, got, tc.want)
		}
	}
}
