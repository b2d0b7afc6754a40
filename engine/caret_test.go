package engine_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
)

// A position's column counts bytes; the caret under it counts characters,
// so that it stands under the mistake after text that is not ASCII.
func TestCaretCountsCharacters(t *testing.T) {
	const lead = "    when: platform == " // 22 characters
	for _, tc := range []struct{ before, pad string }{
		{"'ééé'", strings.Repeat(".", 22+5+4)},
		{"'日本'", strings.Repeat(".", 22+4+4)},
		{"'a\tb'", strings.Repeat(".", 22+2) + "\t" + strings.Repeat(".", 6)}, // a tab stays a tab
	} {
		line := lead + tc.before + " || platfrom == 'cpu'"
		fsys := versionFS(t, "v3")
		fsys["jax/v3/rules.yaml"] = &fstest.MapFile{Data: []byte("inputs:\n  platform: string\nrules:\n  - id: cpu\n" + line + "\n    device: {type: kDLCPU, id: 0}\n")}
		_, err := engine.Load(fsys, engine.Options{})
		list := engine.Errors(err)
		if len(list) != 1 {
			t.Fatalf("Load: %v\nwant one error", err)
		}
		e := list[0]
		at := strings.Index(line, "platfrom")
		if e.Pos == nil || e.Pos.Line != 5 || e.Pos.Column != at+1 || e.Source != line {
			t.Fatalf("error at %v, source %q; want line 5, byte column %d, source %q", e.Pos, e.Source, at+1, line)
		}
		if want := "\n | " + line + "\n | " + tc.pad + "^"; !strings.HasSuffix(e.Error(), want) {
			t.Errorf("after %s the caret is at\n%s\nwant it under platfrom:%s", tc.before, e.Error(), want)
		}
	}
}
