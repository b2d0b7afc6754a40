package main

import (
	"flag"
	"strings"
)

// suggest returns the candidate a mistyped name most likely meant, or ""
// when none is close: the only candidate the name begins, when it is 3
// letters or more ("platform-v"); else the one at the smallest edit
// distance (a swap of two neighbouring letters counts as one edit, as in
// "reslove"), if that is at most a third of the name's length (at least
// 1). Ties go to the earlier candidate.
func suggest(name string, candidates []string) string {
	prefixed := ""
	for _, c := range candidates {
		if len(name) >= 3 && strings.HasPrefix(c, name) {
			if prefixed != "" {
				prefixed = ""
				break
			}
			prefixed = c
		}
	}
	if prefixed != "" {
		return prefixed
	}
	best, bestDist := "", max(1, len(name)/3)+1
	for _, c := range candidates {
		if d := editDistance(name, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of adjacent bytes.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// unknownFlag returns the name of the first flag in args that fs does not
// define, read as fs.Parse reads args (up to "--" or the first argument
// that is not a flag), or "" when each is defined.
func unknownFlag(fs *flag.FlagSet, args []string) string {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" || len(arg) < 2 || arg[0] != '-' {
			return ""
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-"), "=")
		f := fs.Lookup(name)
		if f == nil {
			return name
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !hasValue && !(ok && b.IsBoolFlag()) {
			i++ // the flag's value
		}
	}
	return ""
}

// flagSuggestion is the hint's "did you mean --NAME? " for a mistyped
// flag in args, or "".
func flagSuggestion(fs *flag.FlagSet, args []string) string {
	name := unknownFlag(fs, args)
	if name == "" {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if s := suggest(name, names); s != "" {
		return "did you mean --" + s + "? "
	}
	return ""
}
