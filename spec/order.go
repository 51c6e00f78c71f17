package spec

import "sort"

// Order returns the steps' names in dependency levels: every step's needs
// are in earlier levels; within a level, steps keep their spec order. It
// assumes a validated (acyclic) spec; steps on a cycle are left out.
func (s *Spec) Order() [][]string {
	level := make(map[string]int, len(s.Steps))
	index := make(map[string]int, len(s.Steps))
	for i, st := range s.Steps {
		index[st.Name] = i
	}
	var depth func(name string, seen map[string]bool) int
	depth = func(name string, seen map[string]bool) int {
		if l, ok := level[name]; ok {
			return l
		}
		i, ok := index[name]
		if !ok || seen[name] {
			return -1
		}
		seen[name] = true
		l := 0
		for _, n := range s.Steps[i].Needs {
			d := depth(n, seen)
			if d < 0 {
				if _, exists := index[n]; exists {
					return -1 // on a cycle
				}
				continue
			}
			l = max(l, d+1)
		}
		delete(seen, name)
		level[name] = l
		return l
	}
	var out [][]string
	for _, st := range s.Steps {
		l := depth(st.Name, map[string]bool{})
		if l < 0 {
			continue
		}
		for len(out) <= l {
			out = append(out, nil)
		}
		out[l] = append(out[l], st.Name)
	}
	for _, names := range out {
		sort.SliceStable(names, func(i, j int) bool { return index[names[i]] < index[names[j]] })
	}
	return out
}

// Dependents returns, for each step name, the steps that need it, in spec order.
func (s *Spec) Dependents() map[string][]string {
	out := make(map[string][]string, len(s.Steps))
	for _, st := range s.Steps {
		for _, n := range st.Needs {
			out[n] = append(out[n], st.Name)
		}
	}
	return out
}

// Sorted sorts steps topologically (Kahn), taking ready steps in file order
// so the output is stable. The loader rejects cycles and unknown needs;
// should any remain, the steps involved follow in file order rather than
// being lost.
func Sorted(steps []*Step) []*Step {
	known := map[string]bool{}
	for _, st := range steps {
		known[st.Name] = true
	}
	waiting := map[string]int{}
	dependents := map[string][]*Step{}
	for _, st := range steps {
		for _, n := range st.Needs {
			if known[n] {
				waiting[st.Name]++
				dependents[n] = append(dependents[n], st)
			}
		}
	}
	done := map[string]bool{}
	out := make([]*Step, 0, len(steps))
	for len(out) < len(steps) {
		progressed := false
		for _, st := range steps {
			if done[st.Name] || waiting[st.Name] > 0 {
				continue
			}
			done[st.Name] = true
			out = append(out, st)
			progressed = true
			for _, d := range dependents[st.Name] {
				waiting[d.Name]--
			}
			break // rescan from the top: earlier ready steps go first
		}
		if !progressed {
			for _, st := range steps {
				if !done[st.Name] {
					done[st.Name] = true
					out = append(out, st)
				}
			}
		}
	}
	return out
}

// NeedsOf are the steps st needs, transitively, nearest first.
func (s *Spec) NeedsOf(st *Step) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(*Step)
	walk = func(x *Step) {
		for _, n := range x.Needs {
			if seen[n] {
				continue
			}
			seen[n] = true
			out = append(out, n)
			if dep := s.Step(n); dep != nil {
				walk(dep)
			}
		}
	}
	walk(st)
	return out
}
