package plan

import (
	"reflect"
	"strings"
	"testing"
)

// TestStrs: the string functions are package strings'.
func TestStrs(t *testing.T) {
	for _, c := range [][2]string{{"", ""}, {"abc", ""}, {"", "a"}, {"a,b,,c", ","}, {"abab", "ab"}, {"héllo\xffx", ""}, {"aaa", "aa"}, {"x", "xyz"}} {
		s, sep := c[0], c[1]
		if got, want := split(s, sep), strings.Split(s, sep); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("split(%q, %q) = %q, want %q", s, sep, got, want)
		}
		if got, want := indexOf(s, sep), strings.Index(s, sep); got != want {
			t.Errorf("indexOf(%q, %q) = %d, want %d", s, sep, got, want)
		}
		if hasPrefix(s, sep) != strings.HasPrefix(s, sep) || hasSuffix(s, sep) != strings.HasSuffix(s, sep) {
			t.Errorf("hasPrefix/hasSuffix(%q, %q) differ from strings'", s, sep)
		}
		if got, want := join(strings.Split(s, sep), "|"), strings.Join(strings.Split(s, sep), "|"); got != want {
			t.Errorf("join = %q, want %q", got, want)
		}
	}
}
