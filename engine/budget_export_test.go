package engine

// LoadNodes is what c's versions weigh against MaxLoadNodes.
func LoadNodes(c *Catalog) int {
	n := 0
	for _, rs := range c.RuleSets() {
		n += rs.nodes
	}
	return n
}

// DecisionCost is rs's bound on one decision's cost (MaxDecisionCost).
func DecisionCost(rs *RuleSet) uint64 { return rs.decisionCost }
