package engine

import (
	"os"
	"testing"
	"testing/fstest"
)

// A Cache holds what recent loads used, and lets go of the rest: after
// cacheKeep loads of one version only, what only the others used is gone.
func TestCacheDropsWhatLoadsNoLongerUse(t *testing.T) {
	all := os.DirFS("../rules")
	one := fstest.MapFS{}
	for _, name := range []string{ManifestFile, DeviceTypesFile, RulesFile, TestsFile} {
		data, err := os.ReadFile("../rules/jax/v1/" + name)
		if err != nil {
			t.Fatal(err)
		}
		one["jax/v1/"+name] = &fstest.MapFile{Data: data}
	}
	c := NewCache()
	if _, err := Load(all, Options{Cache: c}); err != nil {
		t.Fatal(err)
	}
	full := len(c.progs)
	trees := len(c.trees)
	for range cacheKeep + 1 {
		if _, err := Load(one, Options{Cache: c}); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.progs) == 0 || len(c.progs) >= full/2 || len(c.trees) != 4 {
		t.Errorf("after loading all versions, %d programs and %d files; after jax@v1 alone %d times, %d and %d; want jax@v1's only",
			full, trees, cacheKeep+1, len(c.progs), len(c.trees))
	}
}
