package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestEveryCodeIsDocumented keeps ERRORS.md the contract it says it is:
// every error code a Go constant, the C library or the Python package
// defines is a row of it, once, and every row is a code the source still
// has.
func TestEveryCodeIsDocumented(t *testing.T) {
	table, err := os.ReadFile("../../ERRORS.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_0-9]+)` \\|").FindAllStringSubmatch(string(table), -1) {
		rows[m[1]]++
	}
	goCode := regexp.MustCompile(`(?m)^\s*(?:const\s+)?Code\w*\s+(?:engine\.)?(?:Code\s+)?=\s*"([a-z_0-9]+)"`)
	cCode := regexp.MustCompile(`\\"code\\":\\"([a-z_0-9]+)\\"`)
	pyCode := regexp.MustCompile(`Error\(\s*"([a-z_0-9]+)"`)
	defined := map[string]string{} // code -> first file
	source := ""
	filepath.WalkDir("../..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		var re *regexp.Regexp
		switch {
		case strings.HasSuffix(p, "_test.go"):
			return nil
		case strings.HasSuffix(p, ".go"):
			re = goCode
		case strings.HasSuffix(p, ".c"):
			re = cCode
		case strings.HasSuffix(p, ".py") && !strings.Contains(p, "/tests/"):
			re = pyCode
		default:
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		source += string(data)
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			if _, ok := defined[m[1]]; !ok {
				defined[m[1]] = p
			}
		}
		return nil
	})
	if len(defined) < 50 {
		t.Fatalf("found %d codes in the source; the patterns no longer match it", len(defined))
	}
	var missing []string
	for code, file := range defined {
		if rows[code] == 0 {
			missing = append(missing, code+" ("+file+")")
		}
	}
	slices.Sort(missing)
	for _, m := range missing {
		t.Errorf("code %s is not in ERRORS.md", m)
	}
	for code, n := range rows {
		if n > 1 {
			t.Errorf("ERRORS.md lists %s %d times: a code has one meaning", code, n)
		}
		if !strings.Contains(source, `"`+code+`"`) && !strings.Contains(source, `\"`+code+`\"`) {
			t.Errorf("ERRORS.md lists %s, which no source defines any more", code)
		}
	}
}
