//go:build !(linux || darwin || freebsd || netbsd)

package machine

import (
	"errors"
	"runtime"
)

var errNoDlopen = errors.New("loading shared libraries is not supported on " + runtime.GOOS)

// openSharedLibrary is SystemEnv's Env.Open where purego has no dlopen.
func openSharedLibrary(string) (Library, error) { return nil, errNoDlopen }

// registerFunc refuses: there is no way to call C here.
func registerFunc(any, uintptr) error { return errNoDlopen }
