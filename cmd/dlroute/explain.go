package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/dlroute/dlroute/engine"
)

// explainOne decides one input with its trace and prints it for a person:
// the decision, the rules tried, and every value, with where each is in
// the rule files. An import's decision is explained below its value.
func explainOne(ctx context.Context, rs decider, line []byte, stdout, stderr io.Writer) int {
	data, err := rs.ExplainJSON(ctx, line)
	if err != nil {
		printError(stderr, err)
		return 1
	}
	var x engine.Explanation
	if err := json.Unmarshal(data, &x); err != nil {
		printError(stderr, fmt.Errorf("reading the explanation: %w", err))
		return 1
	}
	var names map[int64]string
	if n, ok := rs.(interface{ DeviceTypes() []engine.DeviceType }); ok {
		names = map[int64]string{}
		for _, dt := range n.DeviceTypes() {
			names[dt.Code] = dt.Name
		}
	}
	writeExplanation(stdout, x, "", names)
	return 0
}

// isDeviceValue says whether a value's name calls it a device type code:
// device, or ending in _device or device_type (gpu_device).
func isDeviceValue(name string) bool {
	return name == "device" || strings.HasSuffix(name, "_device") || strings.HasSuffix(name, "device_type")
}

// writeExplanation prints x. A value the decision did not read that
// failed is "(not needed: ...)", not a failure; a device type code is
// followed by its name in names, the rule set's device_types.
func writeExplanation(w io.Writer, x engine.Explanation, indent string, names map[int64]string) {
	fmt.Fprintf(w, "%sdecision: %s\n", indent, x.Decision)
	fmt.Fprintf(w, "%srules of %s, tried in order until one matches:\n", indent, x.Decision.RuleSet)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range x.Trace.Rules {
		mark := "no"
		switch {
		case r.Error != "":
			mark = "FAILED: " + r.Error
		case r.Matched:
			mark = "MATCHED"
		}
		fmt.Fprintf(tw, "%s  %s\t%s\t%s\n", indent, r.Rule, r.Position, mark)
	}
	tw.Flush()
	if len(x.Trace.Values) == 0 {
		return
	}
	fmt.Fprintf(w, "%svalues (* read by the decision):\n", indent)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, v := range x.Trace.Values {
		used := " "
		if v.Used {
			used = "*"
		}
		shown := "= " + strings.TrimSuffix(compactJSON(v.Value), "\n")
		if code, ok := v.Value.(float64); ok && isDeviceValue(v.Name) && names[int64(code)] != "" && code == float64(int64(code)) {
			shown += " (" + names[int64(code)] + ")"
		}
		switch {
		case v.Error != "" && !v.Used:
			shown = "(not needed: " + v.Error + ")"
		case v.Error != "":
			shown = "failed: " + v.Error
		}
		where := ""
		if v.Position != nil {
			where = v.Position.String()
		}
		fmt.Fprintf(tw, "%s%s %s\t%s\t%s\n", indent, used, v.Name, where, shown)
	}
	tw.Flush()
	for _, v := range x.Trace.Values {
		if v.Import != nil {
			fmt.Fprintf(w, "%simport %s (%s):\n", indent, v.Name, v.Import.Decision.RuleSet)
			writeExplanation(w, *v.Import, indent+"    ", names)
		}
	}
}

// explainLines is resolveLines with each decision's trace:
// {"decision":{...},"trace":{...}} per line.
func explainLines(ctx context.Context, rs decider, r io.Reader, w io.Writer) int {
	return answerLines(ctx, rs.ExplainJSON, r, w)
}
