#!/bin/sh
# Debian's redis-server behind the official image's contract: a command starting with redis-server is run as given,
# reachable from the compose network (the official image turns protected mode off the same way).
[ "$1" = redis-server ] && shift
exec redis-server --protected-mode no "$@"
