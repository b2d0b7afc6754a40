package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/dlroute/dlroute/internal/contract"
)

// TestGeneratedIsFresh: the tables in dlroute.h, dlroute.c, the Python
// package and the Node client are what go generate ./internal/contract writes
// from the Go constants.
func TestGeneratedIsFresh(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	files, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./internal/contract", path)
		}
	}
}

// TestTablesNumbered: each row's number is its index, which String and
// the generated tables rely on.
func TestTablesNumbered(t *testing.T) {
	for i, s := range contract.Statuses() {
		if int(s.Status) != i || s.Status.String() != s.Name {
			t.Errorf("Statuses()[%d] is %d %q (String %q)", i, s.Status, s.Name, s.Status)
		}
	}
	for i, s := range contract.Steps() {
		if int(s.Step) != i || s.Step.String() != s.Name {
			t.Errorf("Steps()[%d] is %d %q (String %q)", i, s.Step, s.Name, s.Step)
		}
	}
}

// TestSpliceRefusesMissingMarkers: a file without the markers is an
// error, not a file the tables are silently left out of.
func TestSpliceRefusesMissingMarkers(t *testing.T) {
	if _, err := splice([]byte("int x;\n"), "#define A 1\n"); err == nil {
		t.Error("splice of a file without markers: no error")
	}
	got, err := splice([]byte("a\n/* "+begin+" */\nold\n/* "+end+" */\nb\n"), "new\n")
	if err != nil || string(got) != "a\n/* "+begin+" */\nnew\n/* "+end+" */\nb\n" {
		t.Errorf("splice = %q, %v", got, err)
	}
}
