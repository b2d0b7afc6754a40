package interop

import (
	"fmt"

	"github.com/dlroute/dlroute/engine"
)

// value is the named value of a decision's trace; an error where the rule
// set does not name it or it failed to evaluate.
func value(x engine.Explanation, name string) (any, error) {
	for _, v := range x.Trace.Values {
		if v.Name != name {
			continue
		}
		if v.Error != "" {
			return nil, fmt.Errorf("value %s: %s", name, v.Error)
		}
		return v.Value, nil
	}
	return nil, fmt.Errorf("%s names no value %s, which the interop shape reads (rules/README.md, \"Libraries on both sides\")", x.Decision.RuleSet, name)
}

func boolValue(x engine.Explanation, name string) (bool, error) {
	v, err := value(x, name)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%s's value %s is %v; want a bool", x.Decision.RuleSet, name, v)
	}
	return b, nil
}

// requestKeywords are a request's request_keywords, as strings, and
// request_kwargs, a value for each. A request that decided a device must
// name a call: null keywords are an error.
func requestKeywords(x engine.Explanation) ([]string, map[string]any, error) {
	kv, err := value(x, "request_keywords")
	if err != nil {
		return nil, nil, err
	}
	list, ok := kv.([]any)
	if !ok {
		return nil, nil, fmt.Errorf("request_keywords is %v, though rule %s decided a call; want a list of keywords", kv, x.Decision.Rule)
	}
	mv, err := value(x, "request_kwargs")
	if err != nil {
		return nil, nil, err
	}
	kwargs, ok := mv.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("request_kwargs is %v; want a map from each keyword to its value", mv)
	}
	keywords := make([]string, len(list))
	for i, k := range list {
		s, ok := k.(string)
		if !ok {
			return nil, nil, fmt.Errorf("request_keywords[%d] is %v; want a string", i, k)
		}
		if _, ok := kwargs[s]; !ok {
			return nil, nil, fmt.Errorf("request_kwargs has no value for the keyword %s", s)
		}
		keywords[i] = s
	}
	return keywords, kwargs, nil
}
