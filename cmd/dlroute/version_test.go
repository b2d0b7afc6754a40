package main

import (
	"runtime/debug"
	"testing"
)

// The transcripts see a fixed build: the version line of a test binary
// would name whatever Go and machine run the tests.
func init() {
	readBuildInfo = func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/dlroute/dlroute", Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"}}}, true
	}
}

func TestVersionLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"a release", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.0"},
			Settings: []debug.BuildSetting{{Key: "GOOS", Value: "darwin"}, {Key: "GOARCH", Value: "arm64"}}},
			"dlroute version v1.4.0 go1.26.8 darwin/arm64 abi 1 capi 1"},
		{"a checkout, edited", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"},
				{Key: "vcs.revision", Value: "35d4947c0a1f2b3c4d5e6f708192a3b4c5d6e7f8"}, {Key: "vcs.time", Value: "2026-05-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			"dlroute version (devel) (35d4947c0a1f, 2026-05-01T10:00:00Z, modified) go1.26.8 linux/amd64 abi 1 capi 1"},
		{"no version stamped", &debug.BuildInfo{GoVersion: "go1.26.8",
			Settings: []debug.BuildSetting{{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"}, {Key: "vcs.revision", Value: "abc123"}}},
			"dlroute version (devel) (abc123) go1.26.8 linux/amd64 abi 1 capi 1"},
	} {
		if got := versionLine(tc.info); got != tc.want {
			t.Errorf("%s: versionLine got\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	for _, tc := range []struct {
		name       string
		candidates []string
		want       string
	}{
		{"reslove", commandOrder, "resolve"},
		{"resolv", commandOrder, "resolve"},
		{"playgorund", commandOrder, "playground"},
		{"sevre", commandOrder, "serve"},
		{"frobnicate", commandOrder, ""},
		{"x", commandOrder, ""},
		{"platfrom", []string{"platform", "platform-version", "rules"}, "platform"},
		{"platform-ver", []string{"platform", "platform-version", "rules"}, "platform-version"},
		{"local", []string{"local-hardware-id", "memory-kind"}, "local-hardware-id"},
		{"plat", []string{"platform", "platform-version"}, ""}, // two begin with it
	} {
		if got := suggest(tc.name, tc.candidates); got != tc.want {
			t.Errorf("suggest(%q, %q) got %q, want %q", tc.name, tc.candidates, got, tc.want)
		}
	}
}
