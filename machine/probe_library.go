package machine

import "errors"

// cSymbol is a C function to bind: its name in the library, and a pointer
// to the Go func variable that will call it, of the C function's signature.
type cSymbol struct {
	name string
	fptr any
}

// openLibrary loads lib through env.Open, as a *ProbeError on failure.
func openLibrary(env Env, lib string) (Library, error) {
	if env.Open == nil {
		return nil, &ProbeError{Code: CodeLoadFailed, Source: lib, Message: "this Env loads no libraries (Env.Open is nil)"}
	}
	l, err := env.Open(lib)
	if err != nil {
		return nil, loadFailed(lib, err)
	}
	if l == nil {
		return nil, &ProbeError{Code: CodeLoadFailed, Source: lib, Message: "Env.Open returned no library and no error"}
	}
	return l, nil
}

// bindLibrary opens lib and binds syms in it. Every symbol is looked up
// before any is bound, so a library that lacks one is reported before
// anything in it is called; such a library is closed again.
func bindLibrary(env Env, lib string, syms []cSymbol) error {
	l, err := openLibrary(env, lib)
	if err != nil {
		return err
	}
	addrs := make([]uintptr, len(syms))
	for i, s := range syms {
		addr, err := l.Sym(s.name)
		if err == nil && addr == 0 {
			err = errors.New("its address is 0")
		}
		if err != nil {
			l.Close()
			return &ProbeError{Code: CodeMissingSymbol, Source: lib, Message: "no function " + s.name + " (" + err.Error() + ")", err: err}
		}
		addrs[i] = addr
	}
	for i, s := range syms {
		if err := registerFunc(s.fptr, addrs[i]); err != nil {
			l.Close()
			return &ProbeError{Code: CodeLoadFailed, Source: lib, Message: "cannot bind " + s.name + ": " + err.Error(), err: err}
		}
	}
	// The library stays loaded: the Go funcs now point into it.
	return nil
}
