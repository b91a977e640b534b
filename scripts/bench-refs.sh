#!/usr/bin/env bash
# Measures where task refs stop scaling (docs/remote.md, "Where it stops
# scaling"): the cost of a change's fetch that brings nothing, and of
# reading every task's entry, with 100, 1,000 and 10,000 task refs on a
# bare repository standing in for the remote; and how many pushes a
# second that remote takes, one after another and four at once on four
# refs. Prints one line per figure.
#
#   scripts/bench-refs.sh
set -eu
w=$(mktemp -d /tmp/harness-bench-refs.XXXXXX)
trap 'rm -rf "$w"' EXIT
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@l GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@l
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
for n in 100 1000 10000; do
  r=$w/r$n; git init -q --bare $r.git; git init -q $r; cd $r; git remote add origin $r.git
  blob=$(echo '{"id": "x", "status": "in_progress", "claimed_by": "m1-w1"}' | git hash-object -w --stdin)
  tree=$(printf '100644 blob %s\ttask.json\n' $blob | git mktree)
  c=$(git commit-tree $tree -m x)
  git update-ref refs/harness/state $c
  for i in $(seq $n); do echo "create refs/harness/tasks/task-$i $c"; done | git update-ref --stdin
  git push -q origin 'refs/harness/*:refs/harness/*'
  git fetch -q origin '+refs/harness/state*:refs/harness/remote/state*' '+refs/harness/tasks/*:refs/harness/remote/harness/tasks/*'
  t=$(date +%s%N); for k in 1 2 3 4 5; do git fetch -q --no-tags --no-write-fetch-head --prune origin '+refs/harness/state*:refs/harness/remote/state*' '+refs/harness/tasks/*:refs/harness/remote/harness/tasks/*'; done; f=$(( $(ms $t) / 5 ))
  t=$(date +%s%N); for k in 1 2 3 4 5; do git for-each-ref --format='%(objectname) %(refname)' refs/harness/remote/ | awk '{print $1":task.json"}' | git cat-file --batch >/dev/null; done; m=$(( $(ms $t) / 5 ))
  echo "refs $n: fetch (nothing new) $f ms, read every task ref $m ms"
  cd $w
done
# push rate
r=$w/p; git init -q --bare $r.git; git init -q $r; cd $r; git remote add origin $r.git
c0=$(git commit-tree $(git mktree </dev/null) -m x)
one() { local ref=$1 old="" c; for k in $(seq 40); do c=$(git commit-tree $(git mktree </dev/null) -m "$ref $k" ${old:+-p $old}); git push -q --atomic --porcelain origin --force-with-lease=$ref:$old $c:$ref >/dev/null; old=$c; done; }
t=$(date +%s%N); one refs/harness/tasks/a; s=$(ms $t)
echo "sequential: 40 pushes in $s ms: $(( 40000 / s )) pushes/s"
t=$(date +%s%N); for j in 1 2 3 4; do one refs/harness/tasks/b$j & done; wait; s=$(ms $t)
echo "4 at once on 4 refs: 160 pushes in $s ms: $(( 160000 / s )) pushes/s"
