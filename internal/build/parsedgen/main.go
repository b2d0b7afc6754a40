// Command parsedgen writes the ParsedFile of a rules directory: its
// expressions parsed, which engine.Load takes instead of parsing their
// text (engine.WriteParsed); and its PlansFile, every version's plan
// (engine.WritePlans), which the decision module embeds. The embedded
// rules' are made by
//
//	go generate ./rules
//
// and TestParsedFileIsFresh and TestPlansFileIsFresh, in package rules,
// fail until they are made again after an expression changes.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/dlroute/dlroute/engine"
)

func main() {
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	data, err := engine.WriteParsed(engine.DirFS(dir), engine.Options{Root: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "parsedgen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(filepath.Join(dir, engine.ParsedFile), data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "parsedgen:", err)
		os.Exit(1)
	}
	// Positions in plans name the rules as the engine loading them with
	// the default Root does, so that a plan's errors are the engine's.
	plans, err := engine.WritePlans(engine.DirFS(dir), engine.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "parsedgen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(filepath.Join(dir, engine.PlansFile), plans, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "parsedgen:", err)
		os.Exit(1)
	}
}
