//go:build linux || darwin || freebsd || netbsd

package machine

import (
	"fmt"

	"github.com/ebitengine/purego"
)

// openSharedLibrary is SystemEnv's Env.Open: dlopen(lib, RTLD_NOW|RTLD_LOCAL)
// through purego, without cgo. RTLD_NOW makes a library with unresolved
// symbols (a half-installed driver) fail here, not at its first call.
func openSharedLibrary(lib string) (Library, error) {
	h, err := purego.Dlopen(lib, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, err
	}
	return sharedLibrary{name: lib, handle: h}, nil
}

// sharedLibrary is a library dlopen loaded.
type sharedLibrary struct {
	name   string
	handle uintptr
}

func (l sharedLibrary) Sym(name string) (uintptr, error) {
	addr, err := purego.Dlsym(l.handle, name)
	if err != nil {
		return 0, err
	}
	if addr == 0 {
		return 0, fmt.Errorf("%s: symbol %s is NULL", l.name, name)
	}
	return addr, nil
}

func (l sharedLibrary) Close() error { return purego.Dlclose(l.handle) }

// registerFunc makes *fptr, a func variable, call the C function at addr.
// purego panics only for a func type it cannot call or a 0 address; the
// types here are fixed and bindLibrary refuses 0, so it does not.
func registerFunc(fptr any, addr uintptr) error {
	purego.RegisterFunc(fptr, addr)
	return nil
}
