package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/khook/khook/model"
)

// A violation is a line under its step in the text plan and in the
// Policy section of the Markdown; a warn is not printed twice.
func TestPolicyViolationsRendered(t *testing.T) {
	ps := model.PlanStep{Name: "web", Type: "apply", Action: model.ActionCreate,
		Objects: []model.ObjectPlan{{Action: model.ActionCreate, Kind: "Deployment", Namespace: "shop", Name: "web"}}}
	model.RecordViolations(&ps, []model.Violation{
		{Policy: "no-latest", Effect: model.EffectDeny, Object: "Deployment shop/web", Message: "image web:latest is not pinned"},
		{Policy: "one-replica", Effect: model.EffectWarn, Object: "Deployment shop/web", Message: "one replica"},
		{Policy: "ha (binding ha)", Effect: model.EffectAudit, Object: "Deployment shop/web", Message: "ValidatingAdmissionPolicy 'ha' with binding 'ha' audit: two replicas"},
	})
	ps.AuditAnnotations = []model.AuditAnnotation{{Policy: "ha", Object: "Deployment shop/web", Key: "ha/replicas", Value: "1"}}
	p := &model.Plan{Name: "demo", Steps: []model.PlanStep{ps}, PolicyFiles: []string{"org/policies.yaml"},
		PolicyNotes: []string{"not assessed offline: who: reads request.userInfo or authorizer, the identity of the request, which only a live plan knows"}}
	p.Totals = model.PlanTotals(p.Steps)
	var b bytes.Buffer
	if err := WritePlanText(&b, p); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"fail: policy no-latest denies Deployment shop/web: image web:latest is not pinned\n",
		"  policy deny no-latest: Deployment shop/web: image web:latest is not pinned\n",
		"  policy warn one-replica: Deployment shop/web: one replica\n",
		"Policies in force: org/policies.yaml\n",
		"  policy audit ha (binding ha): Deployment shop/web: ValidatingAdmissionPolicy 'ha' with binding 'ha' audit: two replicas\n",
		"  audit annotation ha/replicas: Deployment shop/web: 1\n",
		"Policy note: not assessed offline: who: reads request.userInfo",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text plan lacks %q:\n%s", want, text)
		}
	}
	if strings.Count(text, "one replica") != 1 {
		t.Errorf("the warn is printed more than once:\n%s", text)
	}
	b.Reset()
	writePolicyMD(&b, p)
	md := b.String()
	if !strings.Contains(md, "### Policy") || !strings.Contains(md, "org/policies.yaml") || strings.Index(md, "no-latest") > strings.Index(md, "one-replica") ||
		!strings.Contains(md, "**audit** `ha (binding ha)`") || !strings.Contains(md, "not assessed offline: who") {
		t.Errorf("Policy section:\n%s", md)
	}
}
