package bundle

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/plan"
)

// PlansPath is the archive member that holds the bundle's plans, when it
// carries them: a set of plans (plan.EncodeSet), one for every version
// the bundle holds, as rules/plans.bin is for the embedded rules. The
// manifest lists it as Manifest.Plans, so that signing the manifest signs
// the plans.
const PlansPath = engine.PlansFile

// MaxPlansSize is the longest plans.bin a bundle may carry. A set holds
// a plan per version, so it outgrows one rule file (MaxFileSize): the
// shipped rules' set is about 1.1 MB (ls -l rules/plans.bin). Eight times
// MaxFileSize leaves room for several times as many versions, and stays
// within MaxUnpackedSize, which counts it with the files.
const MaxPlansSize = 8 * MaxFileSize

// CodePlansMismatch: a bundle's plans.bin is not the plans of its rules:
// it names other versions than the manifest (Build, Read), or it is not
// what the engine builds from the rules (package live's gate, which
// calls CheckPlans).
const CodePlansMismatch Code = "plans_mismatch"

// Plans returns the bundle's plans.bin, or nil when it carries none (a
// bundle built before bundles carried plans, or without them). Read
// checked its digest and that it holds a plan for exactly the bundle's
// versions; whether each plan is the one its rules build is CheckPlans's
// to say. The bytes are shared: do not change them.
func (b *Bundle) Plans() []byte { return b.plans }

// CheckPlans reports whether the bundle's plans.bin is, byte for byte,
// the set want: the plans the engine builds from the bundle's
// rules (package live's gate builds them). A bundle without plans.bin
// passes. A difference is an *Error with CodePlansMismatch that names
// the first version whose plan differs.
func (b *Bundle) CheckPlans(want []byte) error {
	if b.plans == nil || bytes.Equal(b.plans, want) {
		return nil
	}
	msg := "the bundle's plans are not the ones its rules build"
	got, err1 := plan.DecodeSet(b.plans)
	built, err2 := plan.DecodeSet(want)
	if err1 == nil && err2 == nil && len(got) == len(built) {
		for i := range got {
			if got[i].Ref != built[i].Ref || !bytes.Equal(got[i].Plan, built[i].Plan) {
				msg = "the plan of " + got[i].Ref + " is not the one its rules build"
				break
			}
		}
	}
	return errorf(CodePlansMismatch, PlansPath, "%s with this dlroute", msg)
}

// checkPlansSet reports whether data is a set of plans of exactly the
// versions refs (sorted).
func checkPlansSet(data []byte, refs []string) *Error {
	entries, err := plan.DecodeSet(data)
	if err != nil {
		return &Error{Code: CodePlansMismatch, Path: PlansPath, Message: "not a set of plans: " + err.Error(), err: err}
	}
	got := make([]string, len(entries))
	for i, e := range entries {
		got[i] = e.Ref
	}
	if !slices.Equal(got, refs) {
		return errorf(CodePlansMismatch, PlansPath, "the plans are of %s; the bundle's versions are %s", orNone(got), orNone(refs))
	}
	return nil
}

func orNone(refs []string) string {
	if len(refs) == 0 {
		return "none"
	}
	return strings.Join(refs, " ")
}

// plansFile is the manifest's entry for plans.bin.
func plansFile(data []byte) *File {
	sum := sha256.Sum256(data)
	return &File{Path: PlansPath, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
}
