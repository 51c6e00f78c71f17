// Command planwalk measures the walk of `khook plan` through the code (issue
// #40): how many functions and files a reader passes through following a
// helm step from the plan command to the helm executor, and how often the
// walk climbs back up a layer. Run it from the module root:
//
//	go run ./hack/planwalk            # summary
//	go run ./hack/planwalk -v         # and every function of the walk
//
// The walk, precisely: build the static call graph of the module's own
// non-test packages (golang.org/x/tools: SSA, then VTA over a CHA graph,
// so interface and function-value calls go to the implementations that
// can reach them; calls into other modules are not followed; synthetic
// wrappers are passed through; a closure counts as called by the function
// that makes it, which also covers one a library calls back, as wg.Go; calls
// through a method of an interface another module declares, as error's
// Error or io.Writer's Write, are the library's contract and not followed).
// The walk is every khook function F that
// is reachable from -from (runner/command.(*PlanCommand).Run) and lies on
// the plan of a helm step: F reaches -to (runner/helmstep.(*Executor).Plan)
// or is reached from it. Closures count as functions of their own, in their
// parent's file. A climb is a call between two functions of the walk whose
// callee's package sits in a higher layer than the caller's, layers being
// the rows of docs/architecture.md's "packages as layers" table (top row
// highest; packages it does not list have no layer and never climb).
//
// It prints the walk's functions, files and climbs, and the same figures
// for the part up to the executor (the functions that reach -to).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"golang.org/x/tools/go/callgraph"
	"golang.org/x/tools/go/callgraph/cha"
	"golang.org/x/tools/go/callgraph/vta"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

func main() {
	from := flag.String("from", "runner/command.(*PlanCommand).Run", "the walk's start: package path (below the module) and function, as go/ssa names it")
	to := flag.String("to", "runner/helmstep.(*Executor).Plan", "the helm executor's plan entry")
	verbose := flag.Bool("v", false, "list every function of the walk")
	flag.Parse()
	if err := run(*from, *to, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "planwalk:", err)
		os.Exit(1)
	}
}

func run(from, to string, verbose bool) error {
	module, err := modulePath()
	if err != nil {
		return err
	}
	layers, err := readLayers("docs/architecture.md")
	if err != nil {
		return err
	}
	prog, g, err := load(module)
	if err != nil {
		return err
	}
	w := &walker{module: module, layers: layers, prog: prog, succ: map[*ssa.Function]map[*ssa.Function]token.Pos{}}
	start, target := w.calls(g, from, to)
	if start == nil || target == nil {
		return fmt.Errorf("no function %s or %s in the call graph: pass -from and -to as package/path.(*Type).Method", from, to)
	}
	w.start = start
	w.followSpec()
	upTo, walk := w.sets(target)
	w.print(from, to, upTo, walk, verbose)
	return nil
}

// load builds the module's own non-test packages as SSA and their call
// graph (VTA over CHA).
func load(module string) (*ssa.Program, *callgraph.Graph, error) {
	cfg := &packages.Config{Mode: packages.LoadSyntax | packages.NeedModule}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		return nil, nil, err
	}
	var own []*packages.Package
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			return nil, nil, fmt.Errorf("package %s: %v", p.PkgPath, p.Errors[0])
		}
		if !strings.HasPrefix(p.PkgPath, module+"/hack/") && !strings.HasPrefix(p.PkgPath, module+"/test/") && !strings.HasPrefix(p.PkgPath, module+"/tools/") {
			own = append(own, p)
		}
	}
	prog, _ := ssautil.Packages(own, ssa.InstantiateGenerics)
	prog.Build()
	return prog, vta.CallGraph(ssautil.AllFunctions(prog), cha.CallGraph(prog)), nil
}

// walker is the module's call graph read for one walk: succ is each khook
// function's khook callees, through synthetic wrappers, with the position
// of the first call (for the reading order).
type walker struct {
	module string
	layers map[string]int
	prog   *ssa.Program
	succ   map[*ssa.Function]map[*ssa.Function]token.Pos
	start  *ssa.Function
}

// rel is fn's package path below the module, "" for another module's.
func (w *walker) rel(fn *ssa.Function) string {
	for fn.Parent() != nil {
		fn = fn.Parent()
	}
	if fn.Pkg == nil {
		return ""
	}
	p := fn.Pkg.Pkg.Path()
	switch {
	case p == w.module:
		return "."
	case strings.HasPrefix(p, w.module+"/"):
		return strings.TrimPrefix(p, w.module+"/")
	}
	return ""
}

func (w *walker) name(fn *ssa.Function) string {
	pkg := fn.Pkg
	if pkg == nil && fn.Parent() != nil {
		pkg = fn.Parent().Pkg
	}
	return w.rel(fn) + "." + fn.RelString(pkg.Pkg)
}

func (w *walker) file(fn *ssa.Function) string {
	for fn.Parent() != nil {
		fn = fn.Parent()
	}
	p := w.prog.Fset.Position(fn.Pos())
	wd, _ := os.Getwd()
	if r, err := filepath.Rel(wd, p.Filename); err == nil {
		return r
	}
	return p.Filename
}

// callees adds n's khook callees to into, through synthetic wrappers.
func (w *walker) callees(n *callgraph.Node, at token.Pos, seen map[*callgraph.Node]bool, into map[*ssa.Function]token.Pos) {
	for _, e := range n.Out {
		c := e.Callee
		if c.Func == nil || seen[c] || libraryContract(e, w.module) {
			continue
		}
		seen[c] = true
		pos := at
		if pos == token.NoPos && e.Site != nil {
			pos = e.Site.Pos()
		}
		if c.Func.Synthetic != "" {
			w.callees(c, pos, seen, into)
		} else if old, ok := into[c.Func]; w.rel(c.Func) != "" && (!ok || pos < old) {
			into[c.Func] = pos
		}
	}
}

// calls fills succ from the call graph and finds the functions named from
// and to (nil if absent).
func (w *walker) calls(g *callgraph.Graph, from, to string) (start, target *ssa.Function) {
	for fn, n := range g.Nodes {
		if fn == nil || fn.Synthetic != "" || w.rel(fn) == "" {
			continue
		}
		into := map[*ssa.Function]token.Pos{}
		w.callees(n, token.NoPos, map[*callgraph.Node]bool{n: true}, into)
		for _, anon := range fn.AnonFuncs { // made here, called here or by a library (wg.Go)
			if _, ok := into[anon]; !ok {
				into[anon] = anon.Pos()
			}
		}
		w.succ[fn] = into
		switch w.name(fn) {
		case from:
			start = fn
		case to:
			target = fn
		}
	}
	return start, target
}

// followSpec keeps the calls that are steps of the walk: those whose
// callee is handed the spec (takesSpec).
func (w *walker) followSpec() {
	for f, cs := range w.succ {
		for c := range cs {
			if !takesSpec(c, w.module) {
				delete(cs, c)
			}
		}
		w.succ[f] = cs
	}
}

// sets are the walk's functions: upTo reaches target from the start,
// walk is upTo and what target reaches.
func (w *walker) sets(target *ssa.Function) (upTo, walk map[*ssa.Function]bool) {
	pred := map[*ssa.Function][]*ssa.Function{}
	for f, cs := range w.succ {
		for c := range cs {
			pred[c] = append(pred[c], f)
		}
	}
	reach := func(root *ssa.Function, next func(*ssa.Function) []*ssa.Function) map[*ssa.Function]bool {
		seen := map[*ssa.Function]bool{root: true}
		for queue := []*ssa.Function{root}; len(queue) > 0; queue = queue[1:] {
			for _, n := range next(queue[0]) {
				if !seen[n] {
					seen[n] = true
					queue = append(queue, n)
				}
			}
		}
		return seen
	}
	down := func(f *ssa.Function) []*ssa.Function {
		var out []*ssa.Function
		for c := range w.succ[f] {
			out = append(out, c)
		}
		return out
	}
	fromStart := reach(w.start, down)
	toTarget := reach(target, func(f *ssa.Function) []*ssa.Function { return pred[f] })
	fromTarget := reach(target, down)
	upTo, walk = map[*ssa.Function]bool{}, map[*ssa.Function]bool{}
	for f := range fromStart {
		if toTarget[f] {
			upTo[f], walk[f] = true, true
		}
		if fromTarget[f] {
			walk[f] = true
		}
	}
	return upTo, walk
}

// read is the walk in reading order: depth first from the start, each
// function's callees in the order of their calls, each function once.
func (w *walker) read(set map[*ssa.Function]bool) []*ssa.Function {
	var order []*ssa.Function
	seen := map[*ssa.Function]bool{}
	var visit func(f *ssa.Function)
	visit = func(f *ssa.Function) {
		seen[f] = true
		order = append(order, f)
		var next []*ssa.Function
		for c := range w.succ[f] {
			if set[c] && !seen[c] {
				next = append(next, c)
			}
		}
		sort.Slice(next, func(i, j int) bool {
			if w.succ[f][next[i]] != w.succ[f][next[j]] {
				return w.succ[f][next[i]] < w.succ[f][next[j]]
			}
			return w.name(next[i]) < w.name(next[j])
		})
		for _, c := range next {
			if !seen[c] {
				visit(c)
			}
		}
	}
	visit(w.start)
	return order
}

func (w *walker) figures(set map[*ssa.Function]bool) (files int, climbs []string) {
	fs := map[string]bool{}
	for f := range set {
		fs[w.file(f)] = true
	}
	// Climbs are calls, not neighbours in reading order: a return
	// from a helper below is no climb.
	for _, f := range w.read(set) {
		lf, okf := w.layers[w.rel(f)]
		for c := range w.succ[f] {
			lc, okc := w.layers[w.rel(c)]
			if set[c] && okf && okc && lc < lf {
				climbs = append(climbs, w.name(f)+" -> "+w.name(c))
			}
		}
	}
	sort.Strings(climbs)
	return len(fs), climbs
}

// print writes the figures of the walk and of its part up to the
// executor; verbose, every function and climb first.
func (w *walker) print(from, to string, upTo, walk map[*ssa.Function]bool, verbose bool) {
	if verbose {
		fmt.Println("functions, in reading order:")
		for _, f := range w.read(walk) {
			fmt.Printf("  %s\t%s:%d\n", w.name(f), w.file(f), w.prog.Fset.Position(f.Pos()).Line)
		}
		_, climbs := w.figures(walk)
		fmt.Println("climbs:")
		for _, c := range climbs {
			fmt.Println("  " + c)
		}
	}
	files, climbs := w.figures(walk)
	fmt.Printf("walk of a helm step's plan from %s: %d functions in %d files, %d climbs up a layer\n", from, len(walk), files, len(climbs))
	files, climbs = w.figures(upTo)
	fmt.Printf("  of which up to %s: %d functions in %d files, %d climbs up a layer\n", to, len(upTo), files, len(climbs))
}

// takesSpec: a parameter, the receiver or a captured variable of fn holds
// a type of package spec, directly or in a field of a type of the module.
func takesSpec(fn *ssa.Function, module string) bool {
	seen := map[types.Type]bool{}
	var holds func(t types.Type) bool
	holds = func(t types.Type) bool {
		if seen[t] {
			return false
		}
		seen[t] = true
		switch t := t.(type) {
		case *types.Named:
			p := t.Obj().Pkg()
			if p == nil {
				return false
			}
			if p.Path() == module+"/spec" {
				return true
			}
			if p.Path() != module && !strings.HasPrefix(p.Path(), module+"/") {
				return false // another module's type
			}
			return holds(t.Underlying())
		case *types.Alias:
			return holds(types.Unalias(t))
		case *types.Pointer:
			return holds(t.Elem())
		case *types.Slice:
			return holds(t.Elem())
		case *types.Array:
			return holds(t.Elem())
		case *types.Map:
			return holds(t.Key()) || holds(t.Elem())
		case *types.Struct:
			for i := range t.NumFields() {
				if holds(t.Field(i).Type()) {
					return true
				}
			}
		}
		return false
	}
	for _, p := range fn.Params {
		if holds(p.Type()) {
			return true
		}
	}
	for _, v := range fn.FreeVars {
		if holds(v.Type()) {
			return true
		}
	}
	return false
}

// libraryContract: the call is through a method of an interface another
// module declares (error's Error, fmt.Stringer, io.Writer): the library's
// contract, not a step of khook's walk.
func libraryContract(e *callgraph.Edge, module string) bool {
	if e.Site == nil || !e.Site.Common().IsInvoke() {
		return false
	}
	m := e.Site.Common().Method
	return m.Pkg() == nil || (m.Pkg().Path() != module && !strings.HasPrefix(m.Pkg().Path(), module+"/"))
}

func modulePath() (string, error) {
	f, err := os.Open("go.mod")
	if err != nil {
		return "", fmt.Errorf("run it from the module root: %w", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if m, ok := strings.CutPrefix(s.Text(), "module "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	return "", fmt.Errorf("go.mod names no module")
}

// readLayers numbers the packages of the layer table, 0 for the top row.
func readLayers(path string) (map[string]int, error) {
	doc, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	_, section, ok := strings.Cut(string(doc), "\n## The packages as layers\n")
	if !ok {
		return nil, fmt.Errorf(`%s has no "## The packages as layers" section`, path)
	}
	layers := map[string]int{}
	row := 0
	tick := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[1]) == "layer" {
			continue
		}
		for _, m := range tick.FindAllStringSubmatch(cells[2], -1) {
			layers[m[1]] = row
		}
		row++
	}
	if len(layers) == 0 {
		return nil, fmt.Errorf("%s: no layer table", path)
	}
	return layers, nil
}
