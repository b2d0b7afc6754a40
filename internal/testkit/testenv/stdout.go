package testenv

import (
	"io"
	"os"
	"testing"
)

// Stdout is what f writes to os.Stdout: for a test that runs an Example
// outside -short (one that needs the WebAssembly module, so the quick loop
// only compiles it) and checks what it prints.
func Stdout(t testing.TB, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() {
		out, _ := io.ReadAll(r)
		done <- out
	}()
	defer func() { os.Stdout = saved }()
	f()
	os.Stdout = saved
	w.Close()
	return string(<-done)
}
