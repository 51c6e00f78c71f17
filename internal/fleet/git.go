package fleet

import (
	"fmt"
	"path/filepath"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// ChangedFiles lists, as absolute paths, the files that differ between
// commit from and commit to ("": the working tree, committed or not; not
// untracked files) in the git repository holding dir ("": the working
// directory). khook fleet matrix --changed-since and khook ci's
// changed-only both ask it. It reads the repository in-process (go-git):
// khook's images carry no git.
func ChangedFiles(dir, from, to string) ([]string, error) {
	if dir == "" {
		dir = "."
	}
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return nil, fmt.Errorf("%s is not in a git repository: %v", dir, err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return nil, fmt.Errorf("the git repository of %s has no work tree: %v", dir, err)
	}
	root := wt.Filesystem.Root()
	fromTree, err := tree(repo, from)
	if err != nil {
		return nil, err
	}
	head := to
	if head == "" {
		head = "HEAD"
	}
	toTree, err := tree(repo, head)
	if err != nil {
		return nil, err
	}
	changes, err := object.DiffTree(fromTree, toTree)
	if err != nil {
		return nil, fmt.Errorf("cannot compare %s with %s: %v", from, head, err)
	}
	set := map[string]bool{}
	for _, c := range changes {
		for _, name := range []string{c.From.Name, c.To.Name} {
			if name != "" {
				set[name] = true
			}
		}
	}
	if to == "" { // and what the work tree changed since HEAD
		status, err := wt.Status()
		if err != nil {
			return nil, fmt.Errorf("cannot read the work tree's status: %v", err)
		}
		for name, st := range status {
			if st.Worktree != git.Untracked && (st.Worktree != git.Unmodified || st.Staging != git.Unmodified) {
				set[name] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for name := range set {
		out = append(out, filepath.Join(root, filepath.FromSlash(name)))
	}
	return out, nil
}

// tree is the tree of the commit rev names.
func tree(repo *git.Repository, rev string) (*object.Tree, error) {
	h, err := repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return nil, fmt.Errorf("git has no commit %s here (a shallow clone? fetch it): %v", rev, err)
	}
	c, err := repo.CommitObject(*h)
	if err != nil {
		return nil, fmt.Errorf("git has no commit %s here (a shallow clone? fetch it): %v", rev, err)
	}
	return c.Tree()
}
