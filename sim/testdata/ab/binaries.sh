# Sourced by ab.sh and cg.sh: builds package sim's test binary of revision
# $rev as $tmp/a.test and of the working tree as $tmp/b.test, in a temporary
# worktree removed on exit. Sets top and tmp.
top=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'git -C "$top" worktree remove --force "$tmp/a" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git -C "$top" worktree add -q --detach "$tmp/a" "$rev"
(cd "$tmp/a" && go test -c -o "$tmp/a.test" ./sim)
(cd "$top" && go test -c -o "$tmp/b.test" ./sim)
