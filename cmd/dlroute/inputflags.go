package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/dlroute/dlroute/engine"
)

// inputFlags are the input fields as flags, for a person at a shell: the
// JAX fields and the exchange request. Only the flags given become fields,
// so a rule set's defaults apply to the others, and a field the rule set
// does not declare (--dl-device with jax) is its unknown_field error.
type inputFlags struct {
	fs                   *flag.FlagSet
	platform, version    *string
	memoryKind           *string
	hardwareID, stream   nullableInt
	shards               *int
	dlDevice, maxVersion nullablePair
	copy                 nullableBool
}

// inputFlagNames maps each flag to the input field it sets.
var inputFlagNames = map[string]string{
	"platform": "platform", "platform-version": "platform_version", "memory-kind": "memory_kind",
	"local-hardware-id": "local_hardware_id", "shards": "shards",
	"dl-device": "dl_device", "copy": "copy", "max-version": "max_version", "stream": "stream",
}

func addInputFlags(fs *flag.FlagSet) *inputFlags {
	f := &inputFlags{fs: fs}
	f.platform = fs.String("platform", "", "x.platform(): cpu, gpu, tpu, or a plugin's name")
	f.version = fs.String("platform-version", "", "the device's client.platform_version, such as 'cuda 12030'")
	f.memoryKind = fs.String("memory-kind", "", "the sharding's memory kind: device (default), pinned_host, ...")
	fs.Var(&f.hardwareID, "local-hardware-id", "the device's local_hardware_id, an `int` or null (left out: null)")
	f.shards = fs.Int("shards", 1, "how many shards the array has")
	fs.Var(&f.dlDevice, "dl-device", "exchange: the device the consumer wants, `TYPE,ID` (a code such as 1,0) or null")
	fs.Var(&f.copy, "copy", "exchange: true, false or null")
	fs.Var(&f.maxVersion, "max-version", "exchange: the consumer's highest DLPack version, `MAJOR,MINOR` or null")
	fs.Var(&f.stream, "stream", "exchange: the consumer's stream, an `int` or null")
	return f
}

// given returns the input flags given on the command line.
func (f *inputFlags) given() []string {
	var out []string
	f.fs.Visit(func(fl *flag.Flag) {
		if _, ok := inputFlagNames[fl.Name]; ok {
			out = append(out, "--"+fl.Name)
		}
	})
	return out
}

// withFlagHint gives err, when it says that an input field the flags did
// not set is missing, a hint naming the flag that sets it: engine.Error
// names the field only in its message, and a person at a shell types the
// flag. The missing field is the first required input of rs that the
// flags left out, as RuleSet.Resolve checks them. Any other error is
// returned as it is.
func (f *inputFlags) withFlagHint(err error, rs *engine.RuleSet) error {
	var e *engine.Error
	if rs == nil || !errors.As(err, &e) || e.Code != engine.CodeMissingField || e.Hint != "" {
		return err
	}
	in := f.input()
	for _, decl := range rs.Inputs() {
		if _, ok := in[decl.Name]; ok || !decl.Required {
			continue
		}
		for name, field := range inputFlagNames {
			if field == decl.Name {
				withHint := *e
				withHint.Hint = fmt.Sprintf("give it with --%s; see 'dlroute %s --help'", name, f.fs.Name())
				return &withHint
			}
		}
		return err
	}
	return err
}

// input is the fields of the flags given.
func (f *inputFlags) input() engine.Input {
	in := engine.Input{}
	f.fs.Visit(func(fl *flag.Flag) {
		field, ok := inputFlagNames[fl.Name]
		if !ok {
			return
		}
		switch v := fl.Value.(type) {
		case *nullableInt:
			in[field] = v.v
		case *nullablePair:
			in[field] = v.v
		case *nullableBool:
			in[field] = v.v
		default:
			if field == "shards" {
				in[field] = *f.shards
			} else {
				in[field] = fl.Value.String()
			}
		}
	})
	return in
}

// nullableInt is an int flag that may be "null" (or Python's "None").
type nullableInt struct {
	set bool
	v   any
}

func (n *nullableInt) String() string {
	if !n.set || n.v == nil {
		return ""
	}
	return fmt.Sprint(n.v)
}

func (n *nullableInt) Set(s string) error {
	n.set = true
	if isNull(s) {
		n.v = nil
		return nil
	}
	i, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("want an int or null")
	}
	n.v = i
	return nil
}

// nullablePair is "A,B" (or "(A, B)", "[A, B]") of ints, or null.
type nullablePair struct{ v any }

func (p *nullablePair) String() string {
	if p.v == nil {
		return ""
	}
	return fmt.Sprint(p.v)
}

func (p *nullablePair) Set(s string) error {
	if isNull(s) {
		p.v = nil
		return nil
	}
	var out []any
	for _, part := range strings.Split(strings.Trim(s, "()[] "), ",") {
		i, err := strconv.ParseInt(strings.TrimSpace(part), 10, 64)
		if err != nil {
			return fmt.Errorf("want ints separated by commas, such as 1,0, or null")
		}
		out = append(out, i)
	}
	p.v = out
	return nil
}

// nullableBool is true, false or null (Python's True, False, None too).
type nullableBool struct{ v any }

func (b *nullableBool) String() string {
	if b.v == nil {
		return ""
	}
	return fmt.Sprint(b.v)
}

func (b *nullableBool) Set(s string) error {
	switch strings.ToLower(s) {
	case "true":
		b.v = true
	case "false":
		b.v = false
	case "null", "none":
		b.v = nil
	default:
		return fmt.Errorf("want true, false or null")
	}
	return nil
}

func isNull(s string) bool { return s == "null" || s == "None" }
