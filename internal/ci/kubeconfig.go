package ci

import (
	"fmt"
	"os"

	"k8s.io/client-go/tools/clientcmd"
)

// kubeconfigSecrets lists the credentials in a kubeconfig: tokens,
// passwords, client keys and certificates, auth-provider and exec settings.
// Masking each credential (not the whole document) keeps ordinary lines
// such as "kind: Config" readable in diffs. Content that does not parse is
// masked whole.
func kubeconfigSecrets(content []byte) []string {
	cfg, err := clientcmd.Load(content)
	if err != nil {
		return []string{string(content)}
	}
	var out []string
	for _, a := range cfg.AuthInfos {
		out = append(out, a.Token, a.Password, string(a.ClientKeyData), string(a.ClientCertificateData))
		if a.AuthProvider != nil {
			for _, v := range a.AuthProvider.Config {
				out = append(out, v)
			}
		}
		if a.Exec != nil {
			for _, e := range a.Exec.Env {
				out = append(out, e.Value)
			}
		}
	}
	return out
}

// writeKubeconfig writes the kubeconfig input to a private temp file
// (TMPDIR, else /tmp: writable even with a read-only root filesystem when a
// tmpfs is mounted there) and removes it when the run ends.
func (r *runState) writeKubeconfig() (string, error) {
	f, err := os.CreateTemp("", "khook-kubeconfig-*")
	if err != nil {
		return "", fmt.Errorf("cannot write the kubeconfig input to a temporary file (set TMPDIR to a writable directory): %w", err)
	}
	r.tempFiles = append(r.tempFiles, f.Name())
	if _, err := f.WriteString(r.in.Kubeconfig); err != nil {
		f.Close()
		return "", fmt.Errorf("cannot write the kubeconfig input to %s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("cannot write the kubeconfig input to %s: %w", f.Name(), err)
	}
	return f.Name(), nil
}
