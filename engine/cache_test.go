package engine

import (
	"os"
	"strings"
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

// A Load that fails forgets what it added to the Cache, and keeps what
// the loads before it made: rules refused, for an error or their size,
// leave nothing behind in a host that keeps its good rules in force.
func TestCacheForgetsAFailedLoad(t *testing.T) {
	good := fstest.MapFS{}
	for _, name := range []string{ManifestFile, DeviceTypesFile, RulesFile, TestsFile} {
		data, err := os.ReadFile("../rules/jax/v1/" + name)
		if err != nil {
			t.Fatal(err)
		}
		good["jax/v1/"+name] = &fstest.MapFile{Data: data}
	}
	c := NewCache()
	if _, err := Load(good, Options{Cache: c}); err != nil {
		t.Fatal(err)
	}
	progs, trees := len(c.progs), len(c.trees)

	bad := fstest.MapFS{}
	for name, f := range good {
		bad[name] = f
	}
	rules := strings.Replace(string(good["jax/v1/"+RulesFile].Data), "\nrules:\n",
		"\nrules:\n  - id: new\n    when: \"platform == 'new'\"\n    device: {type: kDLCPU, id: 0}\n"+
			"  - id: broken\n    when: \"platform ==\"\n    device: {type: kDLCPU, id: 0}\n", 1)
	bad["jax/v1/"+RulesFile] = &fstest.MapFile{Data: []byte(rules)}
	if _, err := Load(bad, Options{Cache: c}); err == nil {
		t.Fatal("rules with a broken expression loaded")
	}
	if len(c.progs) != progs || len(c.trees) != trees {
		t.Errorf("after a failed load, the cache holds %d programs and %d files; want the %d and %d of the good rules before it", len(c.progs), len(c.trees), progs, trees)
	}
	if _, err := Load(good, Options{Cache: c}); err != nil || len(c.progs) != progs {
		t.Errorf("the good rules again: %v, %d programs; want them loaded from the cache, %d", err, len(c.progs), progs)
	}
}
