#!/bin/sh
# The stand-ins of MCP for Unity's HTTP mode (tests/fakes/hub_server.py,
# tests/fakes/hub_plugin.py) against each other, asserted from their logs
# by tests/scripts/hub-fakes.py.  They need Debian's python3-websockets
# under /usr/bin/python3; skipped, saying so, without it.
srcdir=${CMDGATE_SRCDIR:-.}
server=${FAKE_HUB_SERVER:-$srcdir/tests/fakes/hub_server.py}
plugin=${FAKE_HUB_PLUGIN:-$srcdir/tests/fakes/hub_plugin.py}
if ! /usr/bin/python3 -c 'import websockets.server' >/dev/null 2>&1; then
	echo "SKIP: /usr/bin/python3 cannot import websockets" \
	    "(apt-get install python3-websockets)"
	exit 77
fi
exec /usr/bin/python3 "$srcdir/tests/scripts/hub-fakes.py" "$server" "$plugin"
