package main

import (
	"cmp"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/dlroute/dlroute/internal/contract"
)

// readBuildInfo is runtime/debug.ReadBuildInfo; tests give a fixed one.
var readBuildInfo = debug.ReadBuildInfo

// runVersion is `dlroute version` (and `dlroute --version`): one line, as
// `go version` prints, for a bug report.
func runVersion(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("version")
	if status, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return status
	}
	info, ok := readBuildInfo()
	if !ok {
		info = nil
	}
	fmt.Fprintln(stdout, versionLine(info))
	return 0
}

// versionLine is "dlroute version VERSION [(REVISION, TIME[, modified])]
// GOVERSION GOOS/GOARCH abi A capi C": the module's version ("(devel)"
// when built from a checkout without one), the VCS revision and commit
// time the go command stamped, the Go that built it, and the versions of
// the WebAssembly module's ABI (wasm/ABI.md) and the C library's
// (DLROUTE_ABI_VERSION in dlroute.h) that this build speaks.
func versionLine(info *debug.BuildInfo) string {
	version, goVersion := "(devel)", runtime.Version()
	settings := map[string]string{"GOOS": runtime.GOOS, "GOARCH": runtime.GOARCH}
	var vcs []string
	if info != nil {
		version = cmp.Or(info.Main.Version, version)
		goVersion = cmp.Or(info.GoVersion, goVersion)
		for _, s := range info.Settings {
			if s.Value != "" {
				settings[s.Key] = s.Value
			}
		}
		if rev := settings["vcs.revision"]; rev != "" {
			vcs = append(vcs, rev[:min(len(rev), 12)])
			if t := settings["vcs.time"]; t != "" {
				vcs = append(vcs, t)
			}
			if settings["vcs.modified"] == "true" {
				vcs = append(vcs, "modified")
			}
		}
	}
	line := "dlroute version " + version
	if len(vcs) > 0 {
		line += " (" + strings.Join(vcs, ", ") + ")"
	}
	return fmt.Sprintf("%s %s %s/%s abi %d capi %d", line, goVersion, settings["GOOS"], settings["GOARCH"], contract.Version, contract.LibraryVersion)
}
