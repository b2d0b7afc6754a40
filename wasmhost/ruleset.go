package wasmhost

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/internal/memo"
)

// RuleSet is a rule set inside the module, resolved from Go: the same
// decisions as engine.RuleSet, made by the WebAssembly engine. Equal inputs
// are answered from a memo on the host side without entering the module.
// It is safe for concurrent use.
type RuleSet struct {
	r           *Runner
	gen         int
	desc        contract.Description
	deviceNames map[int64]string
	memo        *memo.Memo[engine.Decision]
	lines       *contract.Answerer // ResolveJSON's, in front of the module
}

// RuleSet returns the rule set named by ref ("jax", "jax@v2") from the
// rules given to Load. After another Load, get it again.
func (r *Runner) RuleSet(ctx context.Context, ref string) (*RuleSet, error) {
	r.mu.Lock()
	rs, gen := r.sets[ref], r.gen
	r.mu.Unlock()
	if rs != nil {
		return rs, nil
	}
	rs = &RuleSet{r: r, gen: gen, deviceNames: map[int64]string{}, memo: memo.New[engine.Decision](r.cfg.MemoSize)}
	rs.lines = contract.NewAnswerer(rs.resolveJSON, r.cfg.MemoSize)
	err := r.with(ctx, func(inst *instance) error {
		h, err := inst.handle(ctx, ref)
		if err != nil {
			return err
		}
		out, status, err := inst.call(ctx, "dlroute_describe", nil, uint64(h))
		if err != nil {
			return err
		}
		if status != contract.StatusOK {
			return &engine.Error{Code: CodeModule, Message: "dlroute_describe: " + status.String()}
		}
		return json.Unmarshal(out, &rs.desc)
	})
	if err != nil {
		return nil, err
	}
	for _, dt := range rs.desc.DeviceTypes {
		rs.deviceNames[dt.Code] = dt.Name
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gen != gen {
		return nil, &engine.Error{Code: engine.CodeNoRuleSet, Message: "the rules were reloaded while " + ref + " was looked up"}
	}
	if prev := r.sets[ref]; prev != nil {
		return prev, nil
	}
	r.sets[ref] = rs
	return rs, nil
}

// handle returns the instance's handle for ref, asking the module once.
func (inst *instance) handle(ctx context.Context, ref string) (uint32, error) {
	if h, ok := inst.handles[ref]; ok {
		return h, nil
	}
	if inst.gen == 0 {
		return 0, &engine.Error{Code: engine.CodeNoRuleSet, Message: "no rules are loaded", Hint: "call Runner.Load first"}
	}
	if err := inst.grow(ctx, uint32(len(ref)), 0); err != nil {
		return 0, err
	}
	inst.mod.Memory().WriteString(inst.in, ref)
	stack := append(inst.stack[:0], uint64(inst.in), uint64(len(ref)), uint64(inst.out), uint64(inst.outCap))
	if err := inst.fns["dlroute_ruleset"].CallWithStack(ctx, stack); err != nil {
		return 0, inst.trapped(err)
	}
	status, v := contract.Unpack(stack[0])
	if status == contract.StatusOK {
		inst.handles[ref] = v
		return v, nil
	}
	return 0, moduleError(status, inst.read(v))
}

func (inst *instance) read(n uint32) []byte {
	out, _ := inst.mod.Memory().Read(inst.out, min(n, inst.outCap))
	return out
}

// Ref returns "name@version".
func (rs *RuleSet) Ref() string { return rs.desc.Ref }

// Resolve decides one input through the module's binary entry. Inputs are
// checked as engine.RuleSet checks them; a platform_version left out is
// read from the machine by the host's PlatformVersion.
func (rs *RuleSet) Resolve(ctx context.Context, in engine.Input) (engine.Decision, error) {
	var buf [256]byte
	key, err := rs.encode(buf[:0], in)
	if err != nil {
		return engine.Decision{}, err
	}
	if d, ok := rs.memo.Get(key); ok {
		return d, nil
	}
	var d engine.Decision
	// A copy goes into the module, so that buf stays on the stack and a
	// memoised call allocates nothing.
	err = rs.call(ctx, "dlroute_resolve", slices.Clone(key), func(out []byte) error {
		bd, err := contract.DecodeDecision(out)
		if err != nil || int(bd.Rule) >= len(rs.desc.Rules) {
			return &engine.Error{Code: CodeModule, Message: fmt.Sprintf("the module answered a decision that does not decode: %v", err)}
		}
		d = engine.Decision{Rule: rs.desc.Rules[bd.Rule], RuleSet: rs.desc.Ref}
		if bd.Kind == contract.KindException {
			d.Error = &engine.Exception{Type: bd.Type, Message: bd.Message}
			return nil
		}
		d.DeviceType, d.DeviceTypeCode, d.DeviceID = rs.deviceNames[bd.Code], bd.Code, bd.ID
		d.Copy, d.Capsule, d.Flags = bd.Copy, capsuleNames[bd.Capsule], engine.Flags(bd.Flags)
		return nil
	})
	if err != nil {
		return engine.Decision{}, err
	}
	rs.memo.Put(key, d)
	return d, nil
}

// capsuleNames is the capsule kind of each code of a binary decision.
var capsuleNames = [...]string{contract.CapsuleNone: "", contract.CapsuleUnversioned: engine.CapsuleUnversioned, contract.CapsuleVersioned: engine.CapsuleVersioned}

// ResolveJSON decides one JSON input through the module's JSON entry, for
// `dlroute resolve --json`: the decision's JSON, byte for byte what the
// native engine writes, or an *engine.Error for an input or evaluation
// error.
func (rs *RuleSet) ResolveJSON(ctx context.Context, line []byte) ([]byte, error) {
	out, err := rs.lines.Decide(ctx, line)
	return slices.Clone(out), err // the memo's copy stays the memo's
}

// resolveJSON is the module's answer to line.
func (rs *RuleSet) resolveJSON(ctx context.Context, line []byte) ([]byte, bool, error) {
	var result []byte
	err := rs.call(ctx, "dlroute_resolve_json", line, func(out []byte) error {
		result = slices.Clone(out)
		return nil
	})
	return result, true, err
}

// ExplainJSON decides one JSON input through the module and returns the
// JSON of its engine.Explanation, byte for byte what the native engine's
// Explain gives; explanations are not memoised.
func (rs *RuleSet) ExplainJSON(ctx context.Context, line []byte) ([]byte, error) {
	var result []byte
	err := rs.call(ctx, "dlroute_explain_json", line, func(out []byte) error {
		result = slices.Clone(out)
		return nil
	})
	return result, err
}

// call runs a resolve export on an instance with current rules; args
// come after the rule set's handle.
func (rs *RuleSet) call(ctx context.Context, name string, input []byte, decode func([]byte) error, args ...uint64) error {
	return rs.r.with(ctx, func(inst *instance) error {
		if inst.gen != rs.gen {
			return &engine.Error{Code: engine.CodeNoRuleSet, Message: "the rules were reloaded; get " + rs.desc.Ref + " again"}
		}
		h, err := inst.handle(ctx, rs.desc.Ref)
		if err != nil {
			return err
		}
		all := [4]uint64{uint64(h)} // on the stack: a memo miss allocates no more for it
		n := copy(all[1:], args)
		out, status, err := inst.call(ctx, name, input, all[:1+n]...)
		if err != nil {
			return err
		}
		if status != contract.StatusOK {
			return moduleError(status, out)
		}
		return decode(out)
	})
}

// moduleError turns an error status and its error object into an
// *engine.Error, or load_error's list into an engine.ErrorList.
func moduleError(status contract.Status, out []byte) error {
	var list engine.ErrorList
	if status == contract.StatusLoadError && json.Unmarshal(out, &list) == nil && len(list) > 0 {
		return list // a version dlroute_load_lazy left to dlroute_ruleset does not compile
	}
	var e engine.Error
	if len(out) > 0 && json.Unmarshal(out, &e) == nil && e.Code != "" {
		return &e
	}
	return &engine.Error{Code: CodeModule, Message: fmt.Sprintf("the module returned %s", status)}
}

// encode writes an input in the binary layout and checks for fields the
// rule set does not declare, as the native engine does.
func (rs *RuleSet) encode(b []byte, in engine.Input) ([]byte, error) {
	found := 0
	for _, d := range rs.desc.Inputs {
		v, ok := in[d.Name]
		if ok {
			found++
		}
		var err error
		if b, err = contract.AppendField(b, v, ok); err != nil {
			return b, &engine.Error{Code: engine.CodeWrongType, Message: fmt.Sprintf("input %s %v", d.Name, err)}
		}
	}
	if found != len(in) {
		names := make([]string, len(rs.desc.Inputs))
		for i, d := range rs.desc.Inputs {
			names[i] = d.Name
		}
		for _, k := range slices.Sorted(maps.Keys(in)) {
			if !slices.Contains(names, k) {
				return b, &engine.Error{Code: engine.CodeUnknownField, Message: fmt.Sprintf("unknown input %q", k),
					Hint: "the inputs of " + rs.desc.Ref + " are: " + strings.Join(names, ", ")}
			}
		}
	}
	return b, nil
}
