package helmfile

import "errors"

// Import reads dir/file (a helmfile.yaml, helmfile.yaml.gotmpl or a
// helmfile.d folder) and returns the khook spec it maps to.
func Import(dir, file string, opts Options) (*Result, error) {
	return nil, errors.New("helmfile.Import: not implemented yet")
}
