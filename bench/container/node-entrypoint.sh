#!/bin/sh
# STAND-IN: what the official node image's docker-entrypoint.sh does. A first argument that is an option or
# not a command on the PATH runs with node; anything else (`emr-bridge migrate`, `sh -c …`) runs as given.
set -e
if [ "${1#-}" != "${1}" ] || [ -z "$(command -v "${1}")" ] || { [ -f "${1}" ] && ! [ -x "${1}" ]; }; then
  set -- node "$@"
fi
exec "$@"
