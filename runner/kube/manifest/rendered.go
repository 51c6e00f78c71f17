package manifest

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// RememberRendered records that objs were rendered into text, the output
// of one chart template (as `helm template --show-only` prints it): a
// refused field of one of them is then reported at its line in that
// output, named "source (rendered)".
func RememberRendered(objs []*unstructured.Unstructured, source string, text []byte) {
	rememberOrigin(objs, &origin{file: source + " (rendered)", text: text})
}
