package wasmhost

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
)

// fakeModule is a WebAssembly module that exports every function a
// dlroute module exports, each returning version: not ours if version is
// not contract.Version. Hand-assembled: type () -> i32, one function, i32.const.
func fakeModule(version byte) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	b = append(b, 1, 5, 1, 0x60, 0, 1, 0x7f) // type section
	b = append(b, 3, 2, 1, 0)                // function section
	var exp []byte
	exp = append(exp, byte(len(exports)))
	for _, name := range exports {
		exp = append(exp, byte(len(name)))
		exp = append(exp, name...)
		exp = append(exp, 0, 0) // a function, index 0
	}
	b = append(b, 7)
	b = binary.AppendUvarint(b, uint64(len(exp))) // LEB128, as WebAssembly sizes are
	b = append(b, exp...)
	b = append(b, 10, 6, 1, 4, 0, 0x41, version, 0x0b) // code: i32.const version
	return b
}

func TestNewRunnerRefusesModules(t *testing.T) {
	needModule(t)
	ctx := context.Background()
	tests := []struct {
		name   string
		module []byte
		want   string
	}{
		{"empty", nil, "not WebAssembly"},
		{"not WebAssembly", []byte("#!/bin/sh\necho hello\n"), "not WebAssembly"},
		{"truncated", module[:len(module)/2], "does not compile"},
		{"another ABI version", fakeModule(contract.Version + 1), "ABI version 2"},
	}
	for _, tt := range tests {
		_, err := NewRunner(ctx, RunnerConfig{Module: tt.module, CacheDir: t.TempDir()})
		e := engine.Errors(err)
		if len(e) != 1 || e[0].Code != CodeModule || !strings.Contains(e[0].Message, tt.want) {
			t.Errorf("%s: NewRunner error %v, want a %s saying %q", tt.name, err, CodeModule, tt.want)
		}
	}
}
