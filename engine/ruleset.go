package engine

import (
	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types/ref"

	"github.com/dlroute/dlroute/internal/memo"
)

// RuleSet is one version of a rule set, compiled: its inputs, tables,
// values and rules, ready to resolve. It is immutable (but for its memo of
// decisions, which changes no result) and safe for concurrent use.
type RuleSet struct {
	name, version string
	ref           string // name@version
	manifest      Manifest
	deviceTypes   []DeviceType
	deviceNames   map[int64]string

	imports []imported
	inputs  []input
	tables  []table
	values  []value
	rules   []rule
	cases   []Case
	slots   map[string]int // input, table and value names -> activation slot

	costLimit    uint64
	decisionCost uint64 // the bound on one decision's cost (MaxDecisionCost)
	nodes        int    // CEL expression nodes compiled (MaxLoadNodes)
	memo         *memo.Memo[Decision]
	source       [32]byte // sourceKey: what it was compiled from, for Options.Reuse
}

// Manifest describes a rule-set version: manifest.yaml.
type Manifest struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Description string   `json:"description"`
	Mirrors     Upstream `json:"mirrors"`
}

// Upstream is the behaviour a rule-set version reproduces.
type Upstream struct {
	Project string   `json:"project"`          // such as "jax-ml/jax"
	Commit  string   `json:"commit,omitempty"` // the commit it was read at
	Date    string   `json:"date,omitempty"`
	Files   []string `json:"files,omitempty"` // where the behaviour lives upstream
	Note    string   `json:"note,omitempty"`

	// Commits and Releases are what a user matches their installation
	// against; nil where the manifest does not say (Releases is nil for a
	// range of commits that no release shipped).
	Commits  *CommitRange  `json:"commits,omitempty"`
	Releases *ReleaseRange `json:"releases,omitempty"`
}

// DeviceType is one entry of device_types.yaml: a DLPack DLDeviceType.
type DeviceType struct {
	Name string `json:"name"` // such as "kDLCUDA"
	Code int64  `json:"code"` // such as 2
}

// Input is one declared input of a rule set, as InputDecl reports it.
type InputDecl struct {
	Name     string `json:"name"`
	Type     string `json:"type"`              // as written: "string", "int?"
	Required bool   `json:"required"`          // no default
	Default  any    `json:"default,omitempty"` // when not required
	Doc      string `json:"doc,omitempty"`
}

type input struct {
	InputDecl
	typ *valueType
	pos Position
}

type table struct {
	name string
	val  ref.Val
}

// value is a named intermediate value, computed the first time a rule
// reads it: an expression, or (imp set) an import's decision.
type value struct {
	name string
	compiled
	imp *RuleSet
	pos Position // of an import
}

type rule struct {
	id     string
	pos    Position
	when   compiled
	device *deviceOutcome
	raise  *raiseOutcome
}

type compiled struct {
	expr expression
	ast  *cel.Ast // checked: what deriveDomain reads
	prg  cel.Program
}

// deviceOutcome is an export to a device. copy, capsule and flags are
// optional (prg nil): a copy into the device first, the capsule kind, and
// the DLPack flags.
type deviceOutcome struct {
	typ, id              compiled
	copy, capsule, flags compiled
}

type raiseOutcome struct {
	typ     string
	message compiled
}

// Name returns the rule set's name, such as "jax".
func (rs *RuleSet) Name() string { return rs.name }

// Version returns the version, such as "v3".
func (rs *RuleSet) Version() string { return rs.version }

// Ref returns "name@version", as decisions name their rule set.
func (rs *RuleSet) Ref() string { return rs.ref }

// Manifest returns the version's manifest.
func (rs *RuleSet) Manifest() Manifest { return rs.manifest }

// DeviceTypes returns the device-type table, in file order.
func (rs *RuleSet) DeviceTypes() []DeviceType { return append([]DeviceType(nil), rs.deviceTypes...) }

// Inputs returns the declared inputs, in file order.
func (rs *RuleSet) Inputs() []InputDecl {
	out := make([]InputDecl, len(rs.inputs))
	for i, in := range rs.inputs {
		out[i] = in.InputDecl
	}
	return out
}

// Declares says whether name is one of the declared inputs.
func (rs *RuleSet) Declares(name string) bool { return rs.isInput(name) }

// Imports returns the versions this one imports, alias -> "name@version",
// in file order as pairs; nil when it imports none.
func (rs *RuleSet) Imports() []Import {
	var out []Import
	for _, im := range rs.imports {
		out = append(out, Import{Alias: im.alias, Ref: im.rs.ref})
	}
	return out
}

// Import is one entry of a version's imports.
type Import struct {
	Alias string `json:"alias"` // the value the importer reads, such as "jax"
	Ref   string `json:"ref"`   // the imported version, such as "jax@v3"
}

// RuleIDs returns the rule ids, in the order they are tried.
func (rs *RuleSet) RuleIDs() []string {
	out := make([]string, len(rs.rules))
	for i, r := range rs.rules {
		out[i] = r.id
	}
	return out
}
