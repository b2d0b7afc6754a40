// Command parsedgen writes the ParsedFile of a rules directory: its
// expressions parsed, which engine.Load takes instead of parsing their
// text (engine.WriteParsed). The embedded rules' is made by
//
//	go generate ./rules
//
// and TestParsedFileIsFresh, in package rules, fails until it is made
// again after an expression changes.
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
}
