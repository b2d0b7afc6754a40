package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Progress goes to a terminal only: a pipe, a file or a buffer gets none,
// so `dlroute diff ... 2>log` and the transcripts see only the report.
func TestIsTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, out := range map[string]io.Writer{"a file": f, "a pipe": w, "a buffer": &strings.Builder{}} {
		if isTerminal(out) {
			t.Errorf("isTerminal(%s) = true, want false", name)
		}
	}
}

// The line is rewritten in place and erased once every input is decided.
func TestProgressLine(t *testing.T) {
	var b strings.Builder
	p := progressLine(&b, "diff exchange@v1 exchange@v2")
	p(14_394, 1_439_424)
	p(647_040, 1_439_424)
	p(1_439_424, 1_439_424)
	want := "\rdiff exchange@v1 exchange@v2: 14,394 of 1,439,424 inputs (0%)\033[K" +
		"\rdiff exchange@v1 exchange@v2: 647,040 of 1,439,424 inputs (44%)\033[K" +
		"\r\033[K"
	if b.String() != want {
		t.Errorf("progress got %q\nwant %q", b.String(), want)
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1439424: "1,439,424", -12345: "-12,345"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
