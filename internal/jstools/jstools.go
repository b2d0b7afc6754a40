// Package jstools finds the JavaScript tools the tests use (tsc, ESLint,
// axe-core), which _npm/package.json pins and `.ci/run` installs with
// `npm ci --prefix internal/jstools/_npm`, and lints the repository's
// JavaScript (TestLint). They are test tools only: nothing dlroute ships
// needs them. The folder's name starts with "_" so that the go command
// never reads what npm installs there (npm packages can hold Go files).
package jstools

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/dlroute/dlroute/internal/testenv"
)

// Dir is the directory of package.json, found from this file's source path.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "_npm")
}

// Path returns the installed file at rel under node_modules (for example
// ".bin/tsc" or "axe-core/axe.min.js"), or skips t (fails it under CI)
// with the command that installs it.
func Path(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(Dir(), "node_modules", filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		testenv.Missing(t, "no "+rel+" under internal/jstools/_npm/node_modules: run `npm ci --prefix internal/jstools/_npm`")
	}
	return p
}
