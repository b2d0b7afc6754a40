package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/machine"
)

// probe reads the machine; tests replace it with fixed devices.
var probe = func(ctx context.Context, opts machine.ProbeOptions) ([]machine.Device, []machine.Attempt) {
	return machine.Probe(ctx, machine.SystemEnv(), opts)
}

// detected is one device and how the rule set decides it.
type detected struct {
	machine.Device
	Decision *engine.Decision `json:"decision,omitempty"`
	Error    *engine.Error    `json:"error,omitempty"`
}

func runDetect(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("detect")
	rulesDir := rulesFlag(fs)
	ruleset := fs.String("ruleset", "jax", "decide each device with the rule set `REF`: NAME, NAME@VERSION or NAME==RELEASE")
	var askJAX askJAXFlag
	fs.Var(&askJAX, "ask-jax", "also ask an installed JAX: --ask-jax asks python3's, --ask-jax=PYTHON that interpreter's (.venv/bin/python); exact, but slow to start")
	asJSON := fs.Bool("json", false, "print one JSON object: devices, their decisions, and each probe tried")
	strict := strictReleaseFlag(fs)
	if status, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return status
	}
	cat, err := loadCatalog(*rulesDir)
	if err != nil {
		printError(stderr, err)
		return 1
	}
	rs, warning, err := lookupRuleSet(cat, *ruleset, *strict, stderr)
	if err != nil {
		printError(stderr, err)
		return 1
	}
	ctx := context.Background()
	devices, attempts := probe(ctx, machine.ProbeOptions{AskJAX: askJAX.python != "", Python: askJAX.python})
	var out []detected
	for _, d := range devices {
		in := engine.Input{"platform": d.Platform, "platform_version": d.PlatformVersion, "local_hardware_id": d.Index}
		dec, err := rs.Resolve(ctx, in)
		row := detected{Device: d}
		if err != nil {
			row.Error = engine.Errors(err)[0]
		} else {
			row.Decision = &dec
		}
		out = append(out, row)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.Encode(struct {
			RuleSet string `json:"ruleset"`
			// ReleaseWarning: what --ruleset NAME==RELEASE rests on
			// when no version was checked against that release.
			ReleaseWarning *engine.ReleaseWarning `json:"release_warning,omitempty"`
			Devices        []detected             `json:"devices"`
			Attempts       []machine.Attempt      `json:"attempts"`
		}{rs.Ref(), warning, out, attempts})
		return 0
	}
	if !hasGPU(devices) {
		fmt.Fprintln(stdout, "no GPU found on this machine:")
		for _, a := range attempts {
			if a.Err != nil {
				fmt.Fprintf(stdout, "  %s: %v\n", a.Probe, a.Err)
			}
		}
		fmt.Fprintln(stdout)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "DEVICE\tPLATFORM\tPLATFORM_VERSION\tPROBE\t%s DECIDES\n", strings.ToUpper(rs.Ref()))
	for _, row := range out {
		decision := ""
		switch {
		case row.Error != nil:
			decision = "error: " + row.Error.Message
		case row.Decision.Error != nil:
			decision = fmt.Sprintf("%s: %s (rule %s)", row.Decision.Error.Type, row.Decision.Error.Message, row.Decision.Rule)
		default:
			decision = fmt.Sprintf("%s, device %d (rule %s)", row.Decision.DeviceType, row.Decision.DeviceID, row.Decision.Rule)
		}
		fmt.Fprintf(tw, "%d\t%s\t%q\t%s\t%s\n", row.Index, row.Platform, row.PlatformVersion, row.Probe, decision)
	}
	tw.Flush()
	return 0
}

func hasGPU(devices []machine.Device) bool {
	for _, d := range devices {
		if d.Platform != "cpu" {
			return true
		}
	}
	return false
}

// askJAXFlag is --ask-jax: alone it asks python3's JAX, and
// --ask-jax=PYTHON asks the JAX of that interpreter (a virtual
// environment's, say); --ask-jax=false asks none.
type askJAXFlag struct{ python string }

func (f *askJAXFlag) IsBoolFlag() bool { return true }

func (f *askJAXFlag) String() string { return f.python }

func (f *askJAXFlag) Set(v string) error {
	switch v {
	case "true":
		f.python = "python3"
	case "false", "":
		f.python = ""
	default:
		f.python = v
	}
	return nil
}
