package wasmbuild

import (
	"context"
	"runtime"
)

// EnvLibrary names a prebuilt libdlroute shared library that Library
// uses instead of building; the Python package reads the same variable.
const EnvLibrary = "DLROUTE_LIB"

// libdlroute is the C library (./libdlroute), built for this machine.
var libdlroute = target{
	what: "the C library libdlroute", pkg: "./libdlroute",
	env:    []string{"GOOS=" + runtime.GOOS, "GOARCH=" + runtime.GOARCH, "CGO_ENABLED=1"},
	envVar: EnvLibrary, subdir: "lib", base: "libdlroute-", ext: ".so",
}

// Library returns the path of libdlroute.so built from the checkout: the
// file named by $DLROUTE_LIB, or the cached build for the current source,
// built first when it is missing (cgo: it needs a C compiler). It is
// Module's build for the C library, cached beside it.
func Library(ctx context.Context, opts Options) (string, error) {
	return build(ctx, opts, libdlroute)
}
