// Package rules holds the rule sets dlroute ships: each is a directory
// <name>/<version>/ of four YAML files (see README.md beside this file), and
// FS embeds them all as the default that `--rules DIR` replaces.
package rules

import (
	"embed"
	"io/fs"
)

// FS holds every embedded rule set, as <name>/<version>/<file>, and
// parsed.bin, their expressions parsed (engine.ParsedFile), which Load
// takes instead of parsing the text when told to trust it
// (engine.Options.TrustParsed); and plans.bin, every version's plan
// (engine.WritePlans), which the decision module embeds.
//
//go:generate go run ../internal/build/parsedgen
//go:embed */* parsed.bin plans.bin
var FS embed.FS

// Embedded reports whether fsys is FS itself: rules as trusted as the
// binary that embeds them, whose parsed.bin a host may take
// (engine.Options.TrustParsed) and hand on to the WebAssembly module. A
// copy of them on disk, a bundle or any other directory is not.
func Embedded(fsys fs.FS) bool { return fsys == fs.FS(FS) }
