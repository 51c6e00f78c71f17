package github

import (
	"encoding/json"
	"fmt"
	"os"
)

// Event is the part of GITHUB_EVENT_PATH's payload khook reads.
type Event struct {
	Number      int `json:"number"`
	PullRequest *struct {
		Number  int    `json:"number"`
		Merged  bool   `json:"merged"`
		HTMLURL string `json:"html_url"`
		// Base is the commit the pull request's diff starts from.
		Base struct {
			SHA string `json:"sha"`
		} `json:"base"`
		Head struct {
			SHA  string `json:"sha"`
			Repo struct {
				Fork bool `json:"fork"`
			} `json:"repo"`
		} `json:"head"`
	} `json:"pull_request"`
	Issue *struct {
		Number      int       `json:"number"`
		PullRequest *struct{} `json:"pull_request"`
	} `json:"issue"`
}

// ReadEvent parses the event payload file; a missing path is no event.
func ReadEvent(path string) (*Event, error) {
	if path == "" {
		return &Event{}, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the GitHub event payload GITHUB_EVENT_PATH=%s: %w", path, err)
	}
	var ev Event
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, fmt.Errorf("the GitHub event payload %s is not JSON: %w", path, err)
	}
	return &ev, nil
}

// PullNumber is the pull request the event is about, 0 when none
// (pull_request, pull_request_target, or a comment on a pull request).
func (e *Event) PullNumber() int {
	if e.PullRequest != nil && e.PullRequest.Number > 0 {
		return e.PullRequest.Number
	}
	if e.Issue != nil && e.Issue.PullRequest != nil {
		return e.Issue.Number
	}
	return 0
}

// FromFork reports whether the pull request's head is a fork.
func (e *Event) FromFork() bool {
	return e.PullRequest != nil && e.PullRequest.Head.Repo.Fork
}
