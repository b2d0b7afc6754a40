package interop

import (
	"maps"

	"github.com/dlroute/dlroute/engine"
)

// Checked says what a cell's answer rests on: for each side, the rule-set
// versions that answer its calls and the releases each was checked
// against, run here or read from source.
type Checked struct {
	// Run is set when every version on both sides was run here against
	// a real release it covers (`python -m dlroute check`), and neither
	// ref named a release that no version was checked against.
	Run bool `json:"run"`
	// Producer is the producer's version, or jax's two: the one that
	// answers __dlpack_device__ and jax-export's for __dlpack__.
	Producer []VersionCheck `json:"producer"`
	Consumer []VersionCheck `json:"consumer"`
}

// VersionCheck is one rule-set version of a cell and what it was checked
// against.
type VersionCheck struct {
	RuleSet string `json:"ruleset"` // such as "numpy@v2"
	// Checked is its manifest's releases.checked: release -> run or
	// source. Empty for a version that mirrors no release.
	Checked map[string]engine.Check `json:"checked,omitempty"`
	// ReleaseWarning is set when the ref named a release that this
	// version was not checked against (newer than every range, or a
	// build between releases): what the answer stands on.
	ReleaseWarning *engine.ReleaseWarning `json:"release_warning,omitempty"`
}

func versionCheck(rs *engine.RuleSet, w *engine.ReleaseWarning) VersionCheck {
	v := VersionCheck{RuleSet: rs.Ref(), ReleaseWarning: w}
	if r := rs.Manifest().Mirrors.Releases; r != nil {
		v.Checked = maps.Clone(r.Checked)
	}
	return v
}

// run reports whether v was run here against a release, and its ref
// named no release outside what was checked.
func (v VersionCheck) run() bool {
	if v.ReleaseWarning != nil {
		return false
	}
	for _, how := range v.Checked {
		if how == engine.CheckRun {
			return true
		}
	}
	return false
}

// Warnings are the release warnings of the cell's refs, producer first.
func (c Checked) Warnings() []*engine.ReleaseWarning {
	var out []*engine.ReleaseWarning
	for _, v := range append(append([]VersionCheck(nil), c.Producer...), c.Consumer...) {
		if v.ReleaseWarning != nil {
			out = append(out, v.ReleaseWarning)
		}
	}
	return out
}

func checkedOf(p *Producer, c *Consumer) Checked {
	ch := Checked{Run: true, Producer: p.checks, Consumer: []VersionCheck{c.check}}
	for _, v := range append(append([]VersionCheck(nil), p.checks...), c.check) {
		ch.Run = ch.Run && v.run()
	}
	return ch
}
