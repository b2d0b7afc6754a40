package wasmhost_test

import (
	"context"
	"fmt"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/wasmhost"
)

// A memory limit past what a wasm32 module can address is refused with
// CodeModule before anything is compiled, not left to panic in wazero.
func ExampleCompile_memoryLimit() {
	_, err := wasmhost.Compile(context.Background(), wasmhost.RunnerConfig{
		Module:           []byte("\x00asm\x01\x00\x00\x00"), // an empty module: the limit is checked first
		MemoryLimitPages: 70000,
	})
	for _, e := range engine.Errors(err) {
		fmt.Println(e.Code)
		fmt.Println(e.Message)
	}
	// Output:
	// module_error
	// MemoryLimitPages is 70000; a wasm32 module addresses at most 65536 pages (4 GiB)
}
