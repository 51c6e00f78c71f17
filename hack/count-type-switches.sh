#!/bin/sh
# Issue #40 acceptance: step-type switches outside spec/ and the dispatcher,
# and the files outside spec/ that read a step's manifest sources
# (an executor reading its own block counts). Run from the repository root.
# step-type switches outside spec/ and the dispatcher (tests, test/ and tools/ aside)
echo "switches:"; grep -rnE '\.(Helm|Apply|Delete|Patch|Wait|Rollout|Job) != nil|(==|case) spec\.Type[A-Z]' --include=*.go . | grep -v _test.go | grep -vE '^\./(spec|test|tools)/|^\./runner/(executors|dispatch)/'
echo "files enumerating manifest sources:"; grep -rlE '\.Manifests([^(]|$)' --include=*.go . | grep -v _test.go | grep -vE '^\./(spec|test|tools)/'
