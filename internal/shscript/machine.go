package shscript

import (
	"slices"

	"mvdan.cc/sh/v3/syntax"
)

// machineVars are bash's own variables that say what machine runs it.
var machineVars = map[string]bool{"OSTYPE": true, "HOSTTYPE": true, "MACHTYPE": true}

// readsMachine: n reads what machine runs the script ($OSTYPE, which
// bash always sets, $(uname -s), or a variable set from them).
func (t *translator) readsMachine(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.ParamExp:
			found = found || x.Param != nil && (machineVars[x.Param.Value] || t.machineVals[x.Param.Value])
		case *syntax.CallExpr:
			found = found || len(x.Args) > 0 && lit(x.Args[0]) == "uname"
		}
		return !found
	})
	return found
}

// machineChain: c's conditions pick by the machine that runs the script
// and no branch of it changes the cluster (how to get kind on darwin or
// linux): its else's exit stops the script on another machine, which is
// no value of the spec to give (trial 46s70k's D1).
func (t *translator) machineChain(c *syntax.IfClause) bool {
	return t.readsMachine(c.Cond[len(c.Cond)-1]) && !slices.ContainsFunc(append(slices.Clone(c.Then), elseOf(c)...), t.mayChange)
}

// machineExit is why an else that exits on a machine none of the
// conditions match (machineChain) changes nothing of the spec.
const machineExit = "the script stops here on a machine none of the conditions before it match, and they read what bash or uname says of the machine that runs the script, no value to give: the branches only set up that machine (a local tool, how to get it), nothing of the cluster, and khook needs none of it"
