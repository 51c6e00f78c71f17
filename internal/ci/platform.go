package ci

// Platform is the CI system khook runs on.
type Platform string

const (
	GitHub Platform = "github"
	GitLab Platform = "gitlab"
	Plain  Platform = "plain"
)

// DetectPlatform reads GITHUB_ACTIONS / GITLAB_CI.
func DetectPlatform(getenv func(string) string) Platform {
	switch {
	case getenv("GITHUB_ACTIONS") == "true":
		return GitHub
	case getenv("GITLAB_CI") == "true":
		return GitLab
	}
	return Plain
}
