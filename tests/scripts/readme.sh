#!/bin/sh
# The README's two set-up commands are where a newcomer starts: the test
# command must be the one CI runs, verbatim, and both must be present.
srcdir=${CMDGATE_SRCDIR:-.}
run=$(grep -n '^apt-get update' "$srcdir/README" | wc -l)
if [ "$run" -ne 2 ]; then
	echo "FAIL: README should hold exactly two 'apt-get update ...' commands, has $run"
	exit 1
fi
testcmd=$(grep '^apt-get update' "$srcdir/README" | grep 'make' | grep 'check' | head -n 1)
if [ -z "$testcmd" ] || ! grep -qF "$testcmd" "$srcdir/.ci/run"; then
	echo "FAIL: .ci/run does not run the README's test command verbatim:"
	echo "  $testcmd"
	exit 1
fi
# So that no suite skips: tmux for the live top test, npm and "npm
# install" for Node 22 and the MCP packages of package.json (issue 35.11).
# An npm already there (NodeSource's nodejs has one, and conflicts with
# Debian's npm package) is used as it is.
for need in ' tmux' '|| apt-get install -y npm;' '&& npm install ' ' make check'; do
	case $testcmd in
	*"$need"*) ;;
	*)	echo "FAIL: the README's test command lacks '$need':"
		echo "  $testcmd"
		exit 1 ;;
	esac
done
# The MCP inspector's command: a pinned version (an unpinned npx picks an
# old one on an old Node), run by the Node 22 of node_modules/, with the
# token of root or of a user (issue 35.12).
insp=$(grep 'npx .*@modelcontextprotocol/inspector' "$srcdir/README")
case $insp in
*'PATH=$PWD/node_modules/.bin:$PATH npx -y @modelcontextprotocol/inspector@'[0-9]*.[0-9]*.[0-9]*' '*) ;;
*)	echo "FAIL: the README's inspector command pins no version or Node 22:"
	echo "  $insp"
	exit 1 ;;
esac
if ! grep -q '^  tok=$(cat /var/lib/cmdgate/token 2>/dev/null || cat ~/.local/state/cmdgate/token)$' "$srcdir/README"; then
	echo "FAIL: the README's inspector command misses root's or a user's token"
	exit 1
fi
# What the walk-through leaves in the state dir, and how to remove it,
# for root and for a user (issue 35.15).
for rm in 'rm -rf /var/lib/cmdgate' 'rm -rf ~/.local/state/cmdgate'; do
	if ! grep -q "^  $rm\$" "$srcdir/README"; then
		echo "FAIL: the README does not say how to remove its state: $rm"
		exit 1
	fi
done
# customPort is the editor's own setting, rewritten when it starts: the
# uloop CLI is pointed at the face with --port (issue 35.14).
if grep -q '"customPort": 8711' "$srcdir/README" ||
    ! grep -q 'uloop compile --port 8711' "$srcdir/README"; then
	echo "FAIL: the README points the uloop CLI at the face through the editor's customPort"
	exit 1
fi
startcmd=$(grep '^apt-get update' "$srcdir/README" | grep 'src/cmdgated' | head -n 1)
if [ -z "$startcmd" ]; then
	echo "FAIL: README lacks the command that starts the broker"
	exit 1
fi
echo "README commands and .ci/run agree"
