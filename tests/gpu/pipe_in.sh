#!/bin/sh
# pipe_in.sh FILE CMD [ARG...] - runs CMD with FILE's bytes on its standard
# input through a pipe, as `cat FILE | CMD ARG...` does: for races whose
# commands are argument lists (lib.sh's race), of a reader fed by a pipe.
f=$1
shift
cat "$f" | "$@"
