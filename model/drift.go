package model

import "fmt"

// DriftedObjects lists what a drift plan found drifted, one line each:
// "step: action Kind ns/name" per object, or "step: action" for a step
// without objects (a Helm release, a job). Empty when nothing drifted.
func DriftedObjects(p *Plan) []string {
	var out []string
	for _, s := range p.Steps {
		if s.ChartMoved != nil {
			out = append(out, fmt.Sprintf("%s: %s", s.Name, s.ChartMoved))
		}
		if !IsChange(s.Action) {
			continue
		}
		n := 0
		for _, o := range s.Objects {
			if !IsChange(o.Action) {
				continue
			}
			name := o.Name
			if o.Namespace != "" {
				name = o.Namespace + "/" + name
			}
			out = append(out, fmt.Sprintf("%s: %s %s %s", s.Name, o.Action, o.Kind, name))
			n++
		}
		if n == 0 && s.ChartMoved == nil {
			out = append(out, fmt.Sprintf("%s: %s", s.Name, s.Action))
		}
	}
	return out
}

// FleetDriftedObjects lists what drifted across a fleet report's clusters,
// each line prefixed by its cluster ("prod-eu: web: configure Deployment
// shop/web"). Empty when no cluster drifted.
func FleetDriftedObjects(rep *FleetReport) []string {
	var out []string
	for _, row := range rep.Clusters {
		if row.Outcome != FleetDrift {
			continue
		}
		var objs []string
		if row.Leg != nil && row.Leg.Plan != nil {
			objs = DriftedObjects(row.Leg.Plan)
		}
		if len(objs) == 0 {
			objs = []string{"drifted"}
		}
		for _, o := range objs {
			out = append(out, row.Cluster+": "+o)
		}
	}
	return out
}
