package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/khook/khook/model"
	"github.com/khook/khook/spec"
)

// GraphNode is one step as the DAG renderers draw it.
type GraphNode struct {
	Name  string
	Type  string
	Needs []string
	Skip  spec.Skip // left out (Skip.Excluded): drawn dashed and labelled skipped
}

// GraphFromSpec lists the steps of a loaded spec in file order.
func GraphFromSpec(s *spec.Spec) []GraphNode {
	nodes := make([]GraphNode, 0, len(s.Steps))
	for _, st := range s.Steps {
		nodes = append(nodes, GraphNode{Name: st.Name, Type: st.Type(), Needs: st.Needs, Skip: st.Skip})
	}
	return nodes
}

// GraphFromPlan lists the steps of a plan, so summaries can draw the DAG
// from the plan document alone.
func GraphFromPlan(p *model.Plan) []GraphNode {
	nodes := make([]GraphNode, 0, len(p.Steps))
	for _, st := range p.Steps {
		nodes = append(nodes, GraphNode{Name: st.Name, Type: st.Type, Needs: st.Needs, Skip: st.Skip})
	}
	return nodes
}

// GraphFromResults lists the steps of a run.
func GraphFromResults(r *model.Results) []GraphNode {
	nodes := make([]GraphNode, 0, len(r.Steps))
	for _, st := range r.Steps {
		nodes = append(nodes, GraphNode{Name: st.Name, Type: st.Type, Needs: st.Needs, Skip: st.Skip})
	}
	return nodes
}

// mermaidID turns a step name into a node id: names are [a-z0-9-], and a
// prefix keeps Mermaid keywords such as "end" from breaking the chart.
func mermaidID(name string) string {
	return "step_" + strings.NewReplacer("-", "_", ".", "_").Replace(name)
}

// mermaidText escapes a label for a quoted Mermaid node.
func mermaidText(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;").Replace(s)
}

// WriteMermaid draws the DAG as a Mermaid flowchart: one node per step
// labelled name and type, an edge from each need. Steps excluded by when:
// are dashed (classDef skipped), labelled skipped, and reached by dotted
// edges. The chart goes out in one Write.
func WriteMermaid(w io.Writer, nodes []GraphNode) error {
	excluded := excludedSet(nodes)
	var b bytes.Buffer
	b.WriteString("flowchart TD\n")
	for _, n := range nodes {
		label := mermaidText(n.Name) + "<br/>" + mermaidText(n.Type)
		if n.Skip.Excluded() {
			label += " (" + skippedLabel(n.Skip) + ")"
		}
		fmt.Fprintf(&b, "    %s[\"%s\"]\n", mermaidID(n.Name), label)
	}
	for _, n := range nodes {
		for _, need := range n.Needs {
			arrow := "-->"
			if n.Skip.Excluded() || excluded[need] {
				arrow = "-.->"
			}
			fmt.Fprintf(&b, "    %s %s %s\n", mermaidID(need), arrow, mermaidID(n.Name))
		}
	}
	var skipped []string
	for _, n := range nodes {
		if n.Skip.Excluded() {
			skipped = append(skipped, mermaidID(n.Name))
		}
	}
	if len(skipped) > 0 {
		b.WriteString("    classDef skipped stroke-dasharray: 5 5\n")
		fmt.Fprintf(&b, "    class %s skipped\n", strings.Join(skipped, ","))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteDOT draws the DAG for Graphviz: excluded steps are style=dashed and
// labelled skipped, as are the edges that touch them.
func WriteDOT(w io.Writer, name string, nodes []GraphNode) error {
	excluded := excludedSet(nodes)
	var b bytes.Buffer
	fmt.Fprintf(&b, "digraph %s {\n", dotQuote(name))
	b.WriteString("    rankdir=TB;\n")
	b.WriteString("    node [shape=box];\n")
	for _, n := range nodes {
		label := n.Name + "\n" + n.Type
		attrs := ""
		if n.Skip.Excluded() {
			label += "\n" + skippedLabel(n.Skip)
			attrs = ", style=dashed"
		}
		fmt.Fprintf(&b, "    %s [label=%s%s];\n", dotQuote(n.Name), dotQuote(label), attrs)
	}
	for _, n := range nodes {
		for _, need := range n.Needs {
			attrs := ""
			if n.Skip.Excluded() || excluded[need] {
				attrs = " [style=dashed]"
			}
			fmt.Fprintf(&b, "    %s -> %s%s;\n", dotQuote(need), dotQuote(n.Name), attrs)
		}
	}
	b.WriteString("}\n")
	_, err := w.Write(b.Bytes())
	return err
}

func excludedSet(nodes []GraphNode) map[string]bool {
	m := map[string]bool{}
	for _, n := range nodes {
		if n.Skip.Excluded() {
			m[n.Name] = true
		}
	}
	return m
}

// dotQuote writes a DOT string literal; newlines become \n line breaks.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
