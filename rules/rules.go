// Package rules holds the rule sets dlroute ships: each is a directory
// <name>/<version>/ of four YAML files (see README.md beside this file), and
// FS embeds them all as the default that `--rules DIR` replaces.
package rules

import "embed"

// FS holds every embedded rule set, as <name>/<version>/<file>, and
// parsed.bin, their expressions parsed (engine.ParsedFile), which Load
// takes instead of parsing the text.
//
//go:generate go run ../internal/parsedgen
//go:embed */* parsed.bin
var FS embed.FS
