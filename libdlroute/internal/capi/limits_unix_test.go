//go:build unix

package capi

import (
	"context"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"runtime/debug"
	"syscall"
	"testing"
)

// TestLengthCheckedBeforeRead: an input over MaxInputLen is refused
// without a byte of it read. The input lies in memory that cannot be
// read (PROT_NONE), as a C caller's buffer past its real length does: a
// read faults, and the fault fails the test. The memo used to hash the
// whole input first, which in libdlroute was a SIGSEGV for a 76-byte
// buffer given with the length 2^40.
func TestLengthCheckedBeforeRead(t *testing.T) {
	testenv.ContentOnly(t)
	unreadable, err := syscall.Mmap(-1, 0, MaxInputLen+1, syscall.PROT_NONE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(unreadable)
	h := openRulesT(t, "")
	jax, exchange := takeRuleSet(t, h, "jax"), takeRuleSet(t, h, "exchange")
	ctx := context.Background()
	entries := map[string]func(){
		"ResolveJSON":       func() { ResolveJSON(ctx, jax, unreadable) },
		"ExplainJSON":       func() { ExplainJSON(ctx, jax, unreadable) },
		"ExchangeJSON":      func() { ExchangeJSON(ctx, exchange, unreadable) },
		"Resolve":           func() { Resolve(ctx, jax, unreadable) },
		"InteropJSON":       func() { InteropJSON(ctx, h, unreadable) },
		"InteropMatrixJSON": func() { InteropMatrixJSON(ctx, h, unreadable) },
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	for name, call := range entries {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s read an input of %d bytes before refusing it: %v", name, len(unreadable), r)
				}
			}()
			call()
		}()
	}
}
